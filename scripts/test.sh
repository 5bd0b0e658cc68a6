#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every test on a fresh Debian 12 machine: install, build, run the whole suite with CTest, then
# build and run the examples against the installed package, then build the Debian packages (a
# build of their own, ./build-deb) and check them.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 600
./scripts/examples.sh build
./scripts/test-package.sh
