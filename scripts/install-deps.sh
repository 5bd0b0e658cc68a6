#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs what cerulion needs to build and test, from Debian 12 packages only. Run as root.
set -eu
export DEBIAN_FRONTEND=noninteractive
packages="cmake g++ make pkg-config libcli11-dev libfmt-dev libzstd-dev nlohmann-json3-dev catch2 zlib1g-dev liblz4-dev"
# The peers `cerulion bench` measures against: Fast DDS (the transport under ROS 2's default RMW)
# and iceoryx (its library, and iox-roudi). Without them the build still works, without those lanes.
packages="$packages libfastrtps-dev libiceoryx-posh-dev iceoryx"
# The Python package (python/) and its tests, for Debian's /usr/bin/python3. Without pybind11 the
# build still works, without the package.
packages="$packages python3-dev pybind11-dev python3-numpy python3-pytest"
# `cerulion view` (Boost.Beast and Boost.Asio, headers only). Without it the build still works,
# without view.
packages="$packages libboost-dev"
# ROS 2 message types: SHA-256 for type hashes (nettle); the test_msgs .msg files and Cyclone DDS
# (the middleware of rmw_cyclonedds) as a stand-in ROS 2 node in the bridge's tests.
packages="$packages nettle-dev ros2-test-interface-files cyclonedds-dev cyclonedds-tools"
# The Debian packages (scripts/package.sh: dpkg-shlibdeps computes their Depends, with file) and
# their checks (scripts/test-package.sh: lintian, systemd-analyze for the flashback units).
packages="$packages dpkg-dev file lintian systemd"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing
fi
