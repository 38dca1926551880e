#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages writepath builds, tests and runs with. Idempotent: installs
# only what is missing, so `make` on a machine that has everything never touches apt.
# Usage: install-deps.sh [build|all]
#   build  what `make` and `make demo` need: the compilers and libraries, mkfs and losetup
#   all    (the default) everything `make test`, `make vm-test` and `make bench` run beside it
set -euo pipefail
group=${1:-all}
case $group in
  build | all) ;;
  *) echo "install-deps: unknown group '$group' (build or all)" >&2; exit 2 ;;
esac

build_packages=(
  build-essential cmake pkg-config
  clang llvm            # BPF objects (clang -target bpf, llvm-strip)
  bpftool libbpf-dev libelf-dev zlib1g-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  rapidjson-dev         # the JSON Lines sink's streaming writer (header-only)
  libgtest-dev googletest  # the tests are part of the default build
  libprotobuf-dev protobuf-compiler  # the Perfetto sink's trace format (protoc at build)
  liburing-dev          # kv-tier's io_uring engine (shared and static library)
  prometheus-cpp-dev    # writepath serve's /metrics exposition (core + pull)
  e2fsprogs util-linux  # mkfs.ext4, losetup for the scratch filesystems (make demo, the tests)
)
test_packages=(
  prometheus curl       # serve's integration test: a real Prometheus scrapes it, queried over HTTP
  xfsprogs btrfs-progs  # the xfs and btrfs scratch filesystems of the journal and device tests
  fio strace python3    # independent counts for the write-path tests and scripts/coverage-matrix.sh
  bindfs                # a real FUSE file system for the FUSE tests (its daemon answers the writes)
  python3-numpy vmtouch # real readers of the read-path tests: numpy's memmap, vmtouch's touch/evict
  python3-torch         # and PyTorch's torch.load of a checkpoint
  qemu-system-x86 cpio file  # make vm-test: Debian 6.1 and 6.12 guests with an emulated NVMe disk
  xz-utils zstd         # make vm-test: the 6.1 kernel image is xz-compressed, 6.12's zstd
  postgresql sqlite3 redis-server  # real applications under the oracle (app_oracle_test.cpp)
  dmsetup               # make vm-test: the guest's device-mapper stack over that disk
  chromium              # the HTML report's integration test renders it headless (no X needed)
  nodejs                # the HTML report page's script: syntax check and a stub-DOM test
  bpftrace linux-perf   # make bench: the bpftrace and perf trace columns beside writepath's
  dpkg-dev              # make package: CPack's Depends from dpkg-shlibdeps
  man-db groff-base gdb # the install tests: the man page renders, gdb finds the split debug info
  clang-format shellcheck  # make test's gates: formatting of the C/C++ sources, the scripts
  python3-jsonschema    # docs.json_schema: real --format json output against its JSON Schema
  ccache                # make test's build: a clean clone compiles from the cache of the last
)

packages=("${build_packages[@]}")
[[ $group == build ]] || packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "writepath needs Debian packages that are not installed: ${missing[*]}; run \`sudo make deps\`" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
