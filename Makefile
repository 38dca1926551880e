# Thin front over CMake. `make demo` and `make test` set up everything on a fresh machine.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build test unit-test integration-test vm-test demo bench vmlinux format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

unit-test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE integration

integration-test: build
	@cd $(BUILD) && ctest --output-on-failure -L integration

# Debian's 6.1 kernel in QEMU with an emulated NVMe disk: NVMe commands and fentry, which
# this machine lacks (tests/vm/vm-test.sh). Skips with one line if the kernel can't be fetched.
vm-test: build
	@bash tests/vm/vm-test.sh $(BUILD)

# Everything in one ctest run (integration tests are RUN_SERIAL), then the VM suite; both
# run even if the first fails.
test: build
	@rc=0; (cd $(BUILD) && ctest --output-on-failure -j $(JOBS)) || rc=$$?; \
	bash tests/vm/vm-test.sh $(BUILD) || rc=$$?; exit $$rc

demo: build
	@bash scripts/demo.sh $(BUILD)

# writepath beside bpftrace and perf trace, then hook variants, soak, saturation and replay
# (bench/run.sh; ~15 min; ROUNDS, COUNT, SOAK_SECONDS… scale it). Installs the peers itself.
bench: build
	@bash bench/run.sh all $(BUILD)

# Regenerates the checked-in CO-RE header from the running kernel's BTF.
vmlinux: deps
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/x86/vmlinux.h

format:
	clang-format -i $$(git ls-files 'userspace/*.cpp' 'userspace/*.h' 'tests/*.cpp' 'tests/*.c' 'bench/*.c')

clean:
	rm -rf $(BUILD)
