#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Configures and builds into ./build (Release with debug info), using every core.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CERULION_CMAKE_ARGS:-}
cmake --build build -j"$(nproc)"
