#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The main job on a fresh Debian 12 machine: install, build, measure a round trip.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# The binary alone: the tests are test.sh's.
./scripts/build.sh cerulion
./build/cerulion ping "$@"
