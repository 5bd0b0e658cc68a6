// SPDX-License-Identifier: Apache-2.0
// `cerulion play` reads a channel's recorded topic settings through the cerulion profile: one that
// does not parse is said, once, never silently ignored.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/writer.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
namespace recorder = cerulion::recorder;

TEST_CASE("play says once that a recorded depth is not a number, and plays the messages anyway", "[cli][play]") {
  const auto topic = unique_topic("play_bad_depth");
  const auto file = record_temp_path("bad-depth.mcap");
  {
    auto w = recorder::Writer::create(file);
    REQUIRE(w.ok());
    auto ch = w->add_channel(topic, recorder::profile::kMessageEncoding, 0, {{"mode", "free-run"}, {"depth", "lots"}});
    REQUIRE(ch.ok());
    const std::byte payload[] = {std::byte{'x'}};
    for (std::uint32_t i = 0; i < 3; ++i) REQUIRE(w->write(*ch, i, 1000 + i, 1000 + i, payload).ok());
    REQUIRE(w->close().ok());
  }
  auto once = run_cerulion({"play", file, "--json"});
  INFO(once.err);
  REQUIRE(once.exit_code == 0);
  CHECK(nlohmann::json::parse(once.out)["messages_published"] == 3);
  const auto at = once.err.find("'depth' is 'lots'");
  CHECK(at != std::string::npos);
  CHECK(once.err.find("'depth' is 'lots'", at + 1) == std::string::npos);
  CHECK(once.err.find(topic) != std::string::npos);
}
