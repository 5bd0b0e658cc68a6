// SPDX-License-Identifier: Apache-2.0
// The cerulion MCAP profile: what record and flashback write is what play and info read back.

#include <catch2/catch.hpp>

#include "cerulion/recorder/profile.hpp"

using namespace cerulion;
namespace profile = cerulion::recorder::profile;

TEST_CASE("Channel metadata reads back the topic settings it was made from", "[recording][profile]") {
  profile::TopicSettings settings{"robot", "free-run", 64, 1u << 20};
  auto md = profile::channel_metadata(settings);
  CHECK(md.at("domain") == "robot");
  CHECK(md.at("mode") == "free-run");
  CHECK(md.at("depth") == "64");
  CHECK(md.at("max_payload") == "1048576");
  auto back = profile::parse_channel_metadata(md);
  REQUIRE(back.ok());
  CHECK(back->domain == "robot");
  CHECK(back->mode == "free-run");
  CHECK(back->depth == 64);
  CHECK(back->max_payload == 1u << 20);
}

TEST_CASE("Channel metadata leaves out what is not known, and reads absent keys as unknown", "[recording][profile]") {
  auto md = profile::channel_metadata({"d", "lockstep", 0, 0});
  CHECK(md.count("depth") == 0);
  CHECK(md.count("max_payload") == 0);
  auto back = profile::parse_channel_metadata({});
  REQUIRE(back.ok());
  CHECK(back->mode.empty());
  CHECK(back->depth == 0);
}

TEST_CASE("Channel metadata with a depth that is not a number is refused, naming key and value", "[recording][profile]") {
  for (std::string bad : {"sixteen", "-1", "16 ", "", "99999999999"}) {
    auto back = profile::parse_channel_metadata({{"mode", "lockstep"}, {"depth", bad}});
    REQUIRE_FALSE(back.ok());
    CHECK(back.code() == ErrorCode::InvalidArgument);
    CHECK(back.message().find("'depth'") != std::string::npos);
    CHECK(back.message().find("'" + bad + "'") != std::string::npos);
  }
}

TEST_CASE("The closing record of a recording reads back its host, version, domain and counts", "[recording][profile]") {
  profile::RecordingSummary summary{"host1", "1.2.3", "robot", {{"/b", 5, 1}, {"/a", 10, 0}}};
  auto md = profile::recording_metadata(summary);
  CHECK(md.name == profile::kRecordingMetadataName);
  CHECK(md.metadata.at("received:/a") == "10");
  CHECK(md.metadata.at("lost:/b") == "1");
  auto back = profile::parse_recording_metadata(md);
  REQUIRE(back.ok());
  CHECK(back->host == "host1");
  CHECK(back->cerulion_version == "1.2.3");
  CHECK(back->domain == "robot");
  REQUIRE(back->topics.size() == 2);
  CHECK(back->topics[0].topic == "/a");
  CHECK(back->topics[0].messages == 10);
  CHECK(back->topics[1].topic == "/b");
  CHECK(back->topics[1].lost == 1);
}

TEST_CASE("A closing record with a bad count, or another record, is refused", "[recording][profile]") {
  auto md = profile::recording_metadata({"h", "v", "d", {{"/a", 1, 0}}});
  md.metadata["lost:/a"] = "many";
  auto back = profile::parse_recording_metadata(md);
  REQUIRE_FALSE(back.ok());
  CHECK(back.message().find("'lost:/a'") != std::string::npos);
  CHECK_FALSE(profile::parse_recording_metadata({"something.else", {}}).ok());
  CHECK_FALSE(profile::parse_flashback_metadata(profile::recording_metadata({})).ok());
}

TEST_CASE("A flashback record reads back what triggered it, its window and its counts", "[recording][profile]") {
  profile::FlashbackSummary s;
  s.trigger = "death";
  s.details = "publisher 1234 of /camera died";
  s.note = "bench";
  s.domain = "robot";
  s.name = "keeper";
  s.keeper_pid = 4321;
  s.window_start_ns = 1'000'000'000;
  s.window_end_ns = 3'000'000'000;
  s.topics = {{"/camera", 30, 2}};
  auto md = profile::flashback_metadata(s);
  CHECK(md.name == profile::kFlashbackMetadataName);
  CHECK(md.metadata.at("messages:/camera") == "30");
  auto back = profile::parse_flashback_metadata(md);
  REQUIRE(back.ok());
  CHECK(back->trigger == "death");
  CHECK(back->details == s.details);
  CHECK(back->note == "bench");
  CHECK(back->name == "keeper");
  CHECK(back->keeper_pid == 4321);
  CHECK(back->window_start_ns == s.window_start_ns);
  CHECK(back->window_end_ns == s.window_end_ns);
  REQUIRE(back->topics.size() == 1);
  CHECK(back->topics[0].messages == 30);
  CHECK(back->topics[0].lost == 2);
  md.metadata["keeper_pid"] = "12x";
  CHECK_FALSE(profile::parse_flashback_metadata(md).ok());
}
