# SPDX-License-Identifier: Apache-2.0
# Thin front over CMake. `make demo` and `make test` set up everything on a fresh machine.
BUILD ?= build
JOBS ?= $(shell nproc)
# The integration tests wait on disks and timers more than they compute: more at once than cores.
INTEGRATION_JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: all deps configure build install package test test-deps unit-test integration-test vm-test \
	soak-tests demo bench bench-vm fuzz vmlinux format clean

DEPS_STAMP := $(BUILD)/.deps-installed
BUILD_DEPS_STAMP := $(BUILD)/.deps-build-installed

all: build

# The Debian packages, installed once per build tree (again when the list changes): `make test`
# and `make demo` on a fresh machine need nothing else, and a rebuild never touches apt. Two
# sets: what building needs (plain `make`, `make demo`: a couple of minutes of apt), and
# everything the tests, the VM suite and the benchmarks run beside it (`make test`). Run by a
# user who cannot install, either stops with one line naming the missing packages.
deps:
	@bash scripts/install-deps.sh all
	@mkdir -p $(BUILD) && touch $(DEPS_STAMP) $(BUILD_DEPS_STAMP)

$(DEPS_STAMP): scripts/install-deps.sh
	@$(MAKE) --no-print-directory deps

$(BUILD_DEPS_STAMP): scripts/install-deps.sh
	@bash scripts/install-deps.sh build
	@mkdir -p $(BUILD) && touch $(BUILD_DEPS_STAMP)

# A configure that fails leaves no cache behind (the next command would find a cache and no
# Makefile) and says why in CMake's own words: its error lines, not the whole log.
configure: $(BUILD_DEPS_STAMP)
	@test -f $(BUILD)/CMakeCache.txt -a -f $(BUILD)/Makefile || \
	  { mkdir -p $(BUILD) && cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      >$(BUILD)/configure.log 2>&1 || \
	    { grep -A3 -E '^CMake Error|not found|Could not find' $(BUILD)/configure.log | head -n 12 >&2; \
	      rm -f $(BUILD)/CMakeCache.txt; \
	      echo "make: configuring $(BUILD) failed (whole log: $(BUILD)/configure.log)" >&2; exit 1; }; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The binary (stripped; debug information in $(PREFIX)/lib/debug/.build-id/), the man page and
# the bash completion under $(PREFIX), below $(DESTDIR) if set. Builds only what it installs.
PREFIX ?= /usr/local
install: configure
	@cmake --build $(BUILD) -j $(JOBS) --target writepath bash_completion
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix $(PREFIX)

# The same files in a .deb ($(BUILD)/writepath_VERSION_ARCH.deb; dpkg -i it).
package: configure
	@cmake --build $(BUILD) -j $(JOBS) --target writepath bash_completion
	@cd $(BUILD) && cpack -G DEB

unit-test: $(DEPS_STAMP) build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE integration

integration-test: $(DEPS_STAMP) build
	@bash scripts/test-env.sh
	@cd $(BUILD) && ctest --output-on-failure -j $(INTEGRATION_JOBS) -L integration

# Debian's 6.1 kernel in QEMU with an emulated NVMe disk: NVMe commands and fentry, which
# this machine lacks (tests/vm/vm-test.sh). Skips with one line if the kernel can't be fetched.
vm-test: $(DEPS_STAMP) build
	@bash tests/vm/vm-test.sh $(BUILD)

# The packages, the build, the unit tests, then the integration tests beside the VM suite, each
# phase timed (scripts/run-tests.sh); the tests run even if an earlier suite failed.
test:
	@MAKE="$(MAKE)" bash scripts/run-tests.sh $(BUILD) $(JOBS) $(INTEGRATION_JOBS)

test-deps: $(DEPS_STAMP)

# The integration suite SOAK times over (5), then each test that failed, how often and its first
# failure (scripts/soak-tests.sh).
SOAK ?= 5
soak-tests: $(DEPS_STAMP) build
	@bash scripts/test-env.sh
	@bash scripts/soak-tests.sh $(BUILD) $(SOAK) $(INTEGRATION_JOBS)

# Builds only what the demo runs: the tracer and its workload (not the tests).
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target writepath wp_workload
	@bash scripts/demo.sh $(BUILD)

# writepath beside bpftrace and perf trace, then hook variants, soak, saturation, replay,
# scenarios, stacks and serve (bench/run.sh; ~30 min; ROUNDS, COUNT, SOAK_SECONDS,
# SERVE_SOAK_SECONDS… scale it). Installs the peers itself.
bench: $(DEPS_STAMP) build
	@bash bench/run.sh all $(BUILD)

# Guest instructions per syscall, untraced, at the floor, as a bystander and traced, for both hook
# plans, in Debian's 6.1 and 6.12 guests under QEMU -icount: the same figures on every run
# (bench/vm/run.sh; tables in $(BUILD)/bench-vm/; WRITEPATH_VM_KERNELS, BENCH_VM_COUNT…).
# Builds only what the guest runs. Run by hand, not by `make test`.
bench-vm: $(DEPS_STAMP) configure
	@bash bench/vm/run.sh $(BUILD)

# The trace-file reader under libFuzzer (clang, ASan, UBSan) for FUZZ_SECONDS (20). Opt-in: the
# corpus itself is replayed by `make test`.
FUZZ_SECONDS ?= 20
fuzz: $(DEPS_STAMP) build
	@cmake -S . -B $(BUILD) -DFUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	@cmake --build $(BUILD) --target fuzz

# Regenerates the checked-in CO-RE header from the running kernel's BTF, for this machine's
# architecture (named as libbpf's __TARGET_ARCH_* names it; CMakeLists.txt picks the same).
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/riscv64/riscv/' \
	-e 's/s390x/s390/' -e 's/ppc64le/powerpc/')
vmlinux: $(BUILD_DEPS_STAMP)
	mkdir -p vmlinux/$(BPF_ARCH)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(BPF_ARCH)/vmlinux.h

format:
	clang-format -i $$(git ls-files 'userspace/*.cpp' 'userspace/*.h' 'tests/*.cpp' 'tests/*.c' 'bench/*.c')

clean:
	rm -rf $(BUILD)
