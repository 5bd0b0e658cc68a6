#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian packages, checked as a user gets them: builds them (scripts/package.sh BUILD_DIR,
# default ./build-deb), then checks each package's file list (dpkg-deb --contents), its Depends
# (computed by dpkg-shlibdeps) and conffiles, lintian's verdict where lintian is installed, and
# unpacks all three into a temporary root (dpkg -x, no maintainer scripts) to run them from there:
# cerulion ping -c 100 (and through a cerulion-<command> link), a plugin found where it was
# installed, the Python module, a program built with find_package(cerulion) and one with
# pkg-config, the man pages, and the flashback units (scripts/check-units.sh: systemd-analyze
# verify, and the keeper they run stopped by SIGTERM with its store kept).
# Without dpkg-deb (not a Debian machine) it says so and exits 77 (skipped).
#   scripts/test-package.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
command -v dpkg-deb >/dev/null || { echo "test-package: skipped: no dpkg-deb here"; exit 77; }
build=${1:-build-deb}

tmp=$(mktemp -d)
domain="test-package-$$"
cleanup() {
  [ -x "$tmp/root/usr/bin/cerulion" ] && "$tmp/root/usr/bin/cerulion" --domain "$domain" clean >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '== %s\n' "$*"; }
fail() { printf 'test-package: %s\n' "$*" >&2; exit 1; }

step "build the packages (scripts/package.sh $build)"
./scripts/package.sh "$build" >"$tmp/package.log" 2>&1 || { cat "$tmp/package.log" >&2; fail "scripts/package.sh failed"; }
version=$(sed -n 's/^project(cerulion VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)
deb() { printf '%s/packages/%s_%s_%s.deb' "$build" "$1" "$version" "$arch"; }
packages="cerulion cerulion-dev"
python=""
[ -f "$(deb python3-cerulion)" ] && { packages="$packages python3-cerulion"; python=yes; }
for p in $packages; do [ -f "$(deb "$p")" ] || fail "no $(deb "$p")"; done

# has PACKAGE PATH...: the package holds each PATH (as dpkg-deb --contents lists it, ./usr/...).
has() {
  list="$tmp/$1.contents"
  [ -f "$list" ] || { dpkg-deb --contents "$(deb "$1")" >"$tmp/$1.listing" && awk '{ print $6 }' "$tmp/$1.listing" >"$list"; }
  p=$1
  shift
  for path in "$@"; do grep -qx -- "$path" "$list" || fail "$p has no $path"; done
}
# only PACKAGE ERE: every file of the package lies where ERE (anchored) says.
only() {
  stray=$(grep -v '/$' "$tmp/$1.contents" | grep -Ev "^($2)" | head -n 5) || true
  [ -z "$stray" ] || fail "$1 holds files it should not: $stray"
}

step "file lists"
libdir=usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has cerulion ./usr/bin/cerulion ./usr/lib/systemd/system/cerulion-flashback@.service \
  ./usr/lib/systemd/user/cerulion-flashback@.service ./etc/default/cerulion-flashback \
  ./usr/share/bash-completion/completions/cerulion ./usr/share/zsh/vendor-completions/_cerulion \
  ./usr/share/fish/vendor_completions.d/cerulion.fish ./usr/share/man/man1/cerulion.1.gz \
  ./usr/share/doc/cerulion/copyright ./usr/share/doc/cerulion/changelog.gz
# Every command: its man page, and its cerulion-<command> link to the binary.
for page in man/cerulion-*.1; do
  command=$(basename "$page" .1)
  has cerulion "./usr/share/man/man1/$command.1.gz"
  grep -q " \./usr/bin/$command -> cerulion\$" "$tmp/cerulion.listing" ||
    fail "cerulion has no link ./usr/bin/$command -> cerulion"
done
if grep -q '^CERULION_PACKAGE_HAS_BRIDGE:.*=TRUE\|Fast DDS yes' "$tmp/package.log"; then
  has cerulion "./$libdir/cerulion/bridge.so"
fi
only cerulion "\./usr/bin/cerulion|\./$libdir/cerulion/[a-z-]*\.so$|\./usr/lib/systemd/(system|user)/cerulion-flashback@\.service$|\./etc/default/cerulion-flashback$|\./usr/share/(man/man1/cerulion[a-z-]*\.1\.gz|bash-completion/completions/cerulion|zsh/vendor-completions/_cerulion|fish/vendor_completions\.d/cerulion\.fish|doc/cerulion/(copyright|changelog\.gz))$"
has cerulion-dev ./usr/include/cerulion/core.hpp ./usr/include/cerulion/version.hpp \
  "./$libdir/libcerulion_core.a" "./$libdir/libcerulion_flashback.a" \
  "./$libdir/cmake/cerulion/cerulionConfig.cmake" "./$libdir/pkgconfig/cerulion.pc" \
  ./usr/share/doc/cerulion-dev/copyright ./usr/share/doc/cerulion-dev/changelog.gz
only cerulion-dev "\./usr/include/cerulion/|\./$libdir/(libcerulion_[a-z_0-9]*\.a|cmake/cerulion/|pkgconfig/cerulion[a-z0-9-]*\.pc)|\./usr/share/doc/cerulion-dev/(copyright|changelog\.gz)$"
if [ -n "$python" ]; then
  has python3-cerulion ./usr/lib/python3/dist-packages/cerulion/__init__.py ./usr/share/doc/python3-cerulion/copyright
  grep -q '^\./usr/lib/python3/dist-packages/cerulion/_cerulion\.cpython-[0-9]*-.*\.so$' "$tmp/python3-cerulion.contents" ||
    fail "python3-cerulion has no extension module _cerulion"
  only python3-cerulion "\./usr/lib/python3/dist-packages/cerulion/|\./usr/share/doc/python3-cerulion/(copyright|changelog\.gz)$"
fi

step "Depends, computed; conffiles"
# field PACKAGE FIELD: the control field's value.
field() { dpkg-deb --field "$(deb "$1")" "$2"; }
depends=$(field cerulion Depends)
for library in libc6 libstdc++6 libzstd1; do
  printf '%s\n' "$depends" | grep -q "\\b$library (>= " || fail "cerulion's Depends names no $library: $depends"
done
printf '  cerulion: Depends: %s\n' "$depends"
field cerulion-dev Depends | grep -q 'libzstd-dev' || fail "cerulion-dev's Depends has no libzstd-dev"
if [ -n "$python" ]; then
  depends=$(field python3-cerulion Depends)
  py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  printf '%s\n' "$depends" | grep -q "python3 (>= $py)" || fail "python3-cerulion's Depends has no python3 (>= $py): $depends"
  printf '%s\n' "$depends" | grep -q 'libc6 (>= ' || fail "python3-cerulion's Depends were not computed: $depends"
fi
if [ -n "$python" ]; then
  # Python's bytecode beside the module goes with the package, or dpkg leaves its directory behind.
  dpkg-deb --info "$(deb python3-cerulion)" prerm | grep -q py3clean || fail "python3-cerulion's prerm leaves __pycache__ behind"
fi
dpkg-deb --info "$(deb cerulion)" conffiles | grep -qx /etc/default/cerulion-flashback ||
  fail "/etc/default/cerulion-flashback is no conffile"
for script in postinst prerm postrm; do
  dpkg-deb --info "$(deb cerulion)" "$script" >"$tmp/$script" || fail "cerulion has no $script"
  sh -n "$tmp/$script" || fail "cerulion's $script is no valid sh"
done

if command -v lintian >/dev/null; then
  step "lintian: no errors"
  for p in $packages; do
    lintian --tag-display-limit 0 "$(deb "$p")" >"$tmp/lintian.out" 2>&1 || true
    sed 's/^/  /' "$tmp/lintian.out"
    if grep -q '^E: ' "$tmp/lintian.out"; then fail "lintian found errors in $p"; fi
  done
else
  step "lintian: skipped (not installed)"
fi

step "unpack into a temporary root and run from there"
for p in $packages; do dpkg-deb -x "$(deb "$p")" "$tmp/root"; done
cerulion="$tmp/root/usr/bin/cerulion"
CERULION_DOMAIN=$domain
export CERULION_DOMAIN
"$cerulion" --version >"$tmp/version.out" 2>&1 || fail "cerulion --version failed"
grep -q "$version" "$tmp/version.out" || fail "cerulion --version does not say $version: $(cat "$tmp/version.out")"
timeout 60 "$cerulion" ping -c 100 >"$tmp/ping.out" 2>&1 || { cat "$tmp/ping.out" >&2; fail "cerulion ping -c 100 failed"; }
grep -q '100' "$tmp/ping.out" || { cat "$tmp/ping.out" >&2; fail "cerulion ping -c 100 did not report 100 round trips"; }
timeout 60 "$tmp/root/usr/bin/cerulion-ping" -c 10 >"$tmp/ping.out" 2>&1 ||
  { cat "$tmp/ping.out" >&2; fail "cerulion-ping -c 10 failed"; }
if [ -f "$tmp/root/$libdir/cerulion/bridge.so" ]; then
  # Outside a build tree the program looks beside itself only: a bridge that runs found bridge.so there.
  env -u CERULION_PLUGIN_DIR timeout 30 "$cerulion" bridge /test/package --export --no-shared-memory \
    --dds-domain 232 --duration 1 >"$tmp/bridge.out" 2>&1 || { cat "$tmp/bridge.out" >&2; fail "cerulion bridge failed"; }
fi
if [ -n "$python" ]; then
  PYTHONPATH="$tmp/root/usr/lib/python3/dist-packages" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import sys, cerulion
assert cerulion.__file__.startswith(sys.argv[1]), cerulion.__file__
pub = cerulion.Publisher("/test/package")
print("python", cerulion.__version__)' "$tmp/root" >"$tmp/python.out" 2>&1 ||
    { cat "$tmp/python.out" >&2; fail "python3 could not import the packaged cerulion"; }
  grep -q "^python $version" "$tmp/python.out" || fail "the packaged Python module is not version $version"
fi
if command -v man >/dev/null; then
  for page in "$tmp"/root/usr/share/man/man1/*.1.gz; do
    MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/man.err" || fail "man could not show $page"
    [ ! -s "$tmp/man.err" ] || { cat "$tmp/man.err" >&2; fail "man warns about ${page##*/}"; }
  done
fi

step "a program of your own against the unpacked cerulion-dev: find_package(cerulion), pkg-config"
mkdir "$tmp/program"
cp scripts/consumer-hello.cpp "$tmp/program/hello.cpp"
cat >"$tmp/program/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(hello LANGUAGES CXX)
find_package(cerulion 0.1 REQUIRED)
add_executable(hello hello.cpp)
target_link_libraries(hello PRIVATE cerulion::core)
CMAKE
cmake -S "$tmp/program" -B "$tmp/program/build" -DCMAKE_PREFIX_PATH="$tmp/root/usr" >"$tmp/program.log" 2>&1 &&
  cmake --build "$tmp/program/build" >>"$tmp/program.log" 2>&1 || { cat "$tmp/program.log" >&2; fail "find_package(cerulion) program did not build"; }
"$tmp/program/build/hello" | grep -q "^cerulion $version: published 1" || fail "the find_package(cerulion) program failed"
flags=$(PKG_CONFIG_PATH="$tmp/root/$libdir/pkgconfig" pkg-config --cflags --libs cerulion)
${CXX:-c++} -std=c++20 "$tmp/program/hello.cpp" -o "$tmp/program/hello-pc" $flags || fail "hello.cpp did not build with: $flags"
"$tmp/program/hello-pc" | grep -q "^cerulion $version: published 1" || fail "the pkg-config program failed"

step "the flashback units: systemd-analyze verify, and what they run (scripts/check-units.sh)"
./scripts/check-units.sh "$tmp/root/usr" "$cerulion" "$tmp/root/etc/default/cerulion-flashback" >"$tmp/units.out" 2>&1 ||
  { cat "$tmp/units.out" >&2; fail "the flashback units failed their check"; }
sed 's/^/  /' "$tmp/units.out"

step "the packages passed"
