#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Configures and builds into ./build (Release with debug info), using every core.
#   scripts/build.sh [TARGET...]    only these targets (default: everything, tests included)
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CERULION_CMAKE_ARGS:-}
if [ "$#" -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
