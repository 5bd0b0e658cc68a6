// SPDX-License-Identifier: Apache-2.0
// The smallest program of your own over an installed cerulion (core alone), built by
// scripts/examples.sh and scripts/test-package.sh with find_package(cerulion) and with pkg-config.
#include <cerulion/core.hpp>
#include <cerulion/version.hpp>
#include <cstdio>

int main() {
  auto pub = cerulion::Publisher::create("/hello");
  if (!pub) return std::puts(pub.message().c_str()), 1;
  std::printf("cerulion %s: published %d\n", CERULION_VERSION_STRING, pub->publish_text("hello").ok());
}
