// SPDX-License-Identifier: Apache-2.0
// Every kind of object cerulion keeps in /dev/shm, made when /dev/shm is full: one clear error,
// never a signal, and nothing left behind (the kinds: tests/support/shm_objects.hpp).

#include <catch2/catch.hpp>

#include <algorithm>

#include "full_shm.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("Making any kind of object in a full /dev/shm fails with one clear error and leaves nothing behind",
          "[full][shm]") {
  std::vector<ShmObjectKind> kinds{topic_segment_kind(), bell_kind(), removed_log_kind(), flashback_store_kind()};
#ifdef CERULION_TEST_HAVE_BRIDGE
  kinds.push_back(bridge_status_kind());
#endif
#ifdef CERULION_TEST_HAVE_VIEW
  kinds.push_back(view_status_kind());
#endif
  REQUIRE(mount_small_shm(64));
  fill_shm();
  for (const auto& kind : kinds) {
    INFO("a " << kind.noun);
    const int before = count_shm_entries(kind.prefix);
    const auto made = kind.make();
    INFO(made.message());
    CHECK(made.code() == ErrorCode::OutOfMemory);
    CHECK(made.message().find("/dev/shm is full") != std::string::npos);
    CHECK(std::count(made.message().begin(), made.message().end(), '\n') == 0);
    CHECK(count_shm_entries(kind.prefix) == before);
  }
}
