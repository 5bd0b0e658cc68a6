// SPDX-License-Identifier: Apache-2.0
// The many-topics measurement: every topic carries its message, the figures it reports move the
// way attaching moves them, the topics are gone afterwards, and bad options are refused.

#include <catch2/catch.hpp>

#include <unistd.h>

#include "cerulion/bench/topic_scale.hpp"
#include "cerulion/core/discovery.hpp"

using namespace cerulion;
using namespace cerulion::bench;

TEST_CASE("Topic scale attaches to every topic and reports what the process holds", "[topic-scale]") {
  TopicScaleOptions options;
  options.topics = 200;
  options.payload = 64;
  options.domain = "scaletest" + std::to_string(::getpid());
  auto report = measure_topic_scale(options);
  INFO(report.message());
  REQUIRE(report.ok());
  CHECK(report->intact == 200);
  CHECK(report->address_space_after > report->address_space_before);
  // Two participants a topic, each mapping its header and one payload generation of 128 B slots:
  // well under a megabyte a topic, where 80 slots of the 1 GiB ceiling took 80 GiB each.
  CHECK(report->address_space_after - report->address_space_before < 200ull << 20);
  CHECK(report->mappings_after >= report->mappings_before + 200);
  CHECK(report->descriptors_after >= report->descriptors_before + 200);
  CHECK(report->shm_committed > 0);
  auto left = list_topics(options.domain);
  REQUIRE(left.ok());
  CHECK(left->topics.empty());
}

TEST_CASE("Topic scale refuses no topics and a payload over the ceiling", "[topic-scale]") {
  TopicScaleOptions none;
  none.topics = 0;
  CHECK(measure_topic_scale(none).code() == ErrorCode::InvalidArgument);
  TopicScaleOptions over;
  over.topics = 1;
  over.payload = 2048;
  over.max_payload = 1024;
  CHECK(measure_topic_scale(over).code() == ErrorCode::InvalidArgument);
}
