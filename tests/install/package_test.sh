#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The .deb CPack makes from the build tree (the build is reused; CPack only installs and
# packs): its control fields, its files, Depends covering every library the binary links
# (checked against dpkg -S of each DT_NEEDED library), and the unpacked binary running.
# Usage: package_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; exit 1; }
debs=("$tmp"/out/*.deb)
((${#debs[@]} == 1)) || { fail "expected one .deb: ${debs[*]}"; exit 1; }
deb=${debs[0]}
arch=$(dpkg --print-architecture)
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")/\1/p' "$build/CPackConfig.cmake")
[[ $(basename "$deb") == "writepath_${version}_${arch}.deb" ]] || fail "file name $(basename "$deb")"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == writepath ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), want $version"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture: $(field Architecture)"
[[ -n $(field Maintainer) ]] || fail "no Maintainer"
[[ $(field Description) == *"write"* ]] || fail "Description: $(field Description)"
dpkg-deb -I "$deb" >/dev/null || fail "dpkg-deb -I fails"

# Depends: every shared library the binary needs, by the package that ships it.
depends=$(field Depends)
for lib in $(readelf -d "$build/writepath" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  path=$(ldconfig -p | awk -v lib="$lib" '$1 == lib && !found { print $NF; found = 1 }')
  [[ -n $path ]] || { fail "$lib not found by ldconfig"; continue; }
  package=$(dpkg -S "$(realpath "$path")" 2>/dev/null | awk -F: 'NR == 1 {print $1}') ||
    package=$(dpkg -S "$path" | awk -F: 'NR == 1 {print $1}')
  [[ ", $depends," == *", $package "* || ", $depends," == *", $package,"* ]] ||
    fail "Depends ($depends) lacks $package (for $lib)"
done

contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
for wanted in ./usr/bin/writepath ./usr/share/man/man1/writepath.1 \
  ./usr/share/bash-completion/completions/writepath ./usr/lib/systemd/system/writepath-serve.service \
  ./usr/share/writepath/deploy/grafana/writepath.json \
  ./usr/share/writepath/deploy/kubernetes/writepath-daemonset.yaml \
  ./usr/share/doc/writepath/copyright; do
  grep -qx -- "$wanted" <<<"$contents" || fail "$wanted not in the package"
done
grep -Eq '^\./usr/lib/debug/\.build-id/[0-9a-f]{2}/[0-9a-f]+\.debug$' <<<"$contents" ||
  fail "no debug file in the package"

dpkg-deb -x "$deb" "$tmp/root"
for licence in Apache-2.0 GPL-2.0-only; do
  grep -q "^License: $licence\$" "$tmp/root/usr/share/doc/writepath/copyright" ||
    fail "the package's copyright file has no $licence licence paragraph"
done
"$tmp/root/usr/bin/writepath" --version | grep -q "^writepath " || fail "unpacked binary does not run"
file -b "$tmp/root/usr/bin/writepath" | grep -q ', stripped' || fail "packaged binary not stripped"
grep -q '^ExecStart=/usr/bin/writepath serve ' "$tmp/root/usr/lib/systemd/system/writepath-serve.service" ||
  fail "the packaged unit does not run /usr/bin/writepath"

echo "package_test: $(basename "$deb"), Depends: $depends; $failures failures"
((failures == 0))
