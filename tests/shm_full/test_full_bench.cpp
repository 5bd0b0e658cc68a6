// SPDX-License-Identifier: Apache-2.0
// A bench whose pong runs out of /dev/shm: the cell names the cause, and a lane that measured
// nothing fails the campaign.

#include <catch2/catch.hpp>

#include "full_shm.hpp"
#include "process.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

TEST_CASE("A bench in a /dev/shm too small for its messages names the cause and exits 1", "[full][bench]") {
  // 1 MiB messages: the first sides' topics fit, a later loan does not.
  REQUIRE(mount_small_shm(6));
  auto r = run_cerulion({"bench", "--lanes", "native-multi", "--sizes", "1MiB", "--runs", "1", "--samples", "20",
                         "--warmup", "5", "--no-flashback"},
                        {}, 120s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("bench: lane native-multi measured nothing: every cell failed") != std::string::npos);
  CHECK(r.err.find("/dev/shm is full") != std::string::npos);
  CHECK(r.out.find("/dev/shm is full") != std::string::npos);  // in the tables too
  CHECK(r.out.find("the pong went away") == std::string::npos);
}
