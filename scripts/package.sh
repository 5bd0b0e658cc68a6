#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian packages (cmake/debian.cmake): cerulion_VERSION_amd64.deb (the command, plugins, man
# pages, completions, the flashback systemd units), cerulion-dev_... and python3-cerulion_...,
# built in a directory of their own (prefix /usr, no tests) and written to BUILD_DIR/packages/.
#   scripts/package.sh [BUILD_DIR]      (default ./build-deb)
# Beside what scripts/install-deps.sh installs, it needs dpkg-dev and file: dpkg-shlibdeps
# computes each package's Depends from the libraries its programs link.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-deb}
for need in dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev file:file; do
  command -v "${need%%:*}" >/dev/null ||
    { printf 'package: %s is needed (apt-get install %s)\n' "${need%%:*}" "${need#*:}" >&2; exit 1; }
done
# shellcheck disable=SC2086 # CERULION_CMAKE_ARGS is a list of arguments
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DCERULION_DEBIAN=ON \
  -DCERULION_BUILD_TESTS=OFF ${CERULION_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; exit 1; }
ls "$build"/packages/*.deb
