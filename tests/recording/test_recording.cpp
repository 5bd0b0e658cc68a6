// SPDX-License-Identifier: Apache-2.0
// Recordings into memory: read back by the recorder's Reader with the profile's channels, closing
// metadata and every message in order; split into several files by size.

#include <catch2/catch.hpp>

#include <thread>

#include "cerulion/core/discovery.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "helpers.hpp"

using namespace cerulion;
using namespace cerulion::recording;
using namespace cerulion::test;
using namespace std::chrono_literals;
namespace profile = cerulion::recorder::profile;

namespace {

struct ReadBack {
  std::map<std::string, profile::TopicSettings> channels;
  std::vector<std::pair<std::string, std::string>> messages;  // topic, text
  std::vector<std::uint64_t> log_times;
  std::optional<profile::RecordingSummary> summary;
};

ReadBack read_back(const recorder::ByteVector& bytes) {
  ReadBack out;
  auto reader = recorder::Reader::open_memory(bytes);
  REQUIRE(reader.ok());
  CHECK(reader->summary().finalized);
  CHECK(reader->problems().empty());
  for (const auto& [id, ch] : reader->summary().channels) {
    CHECK(ch.message_encoding == profile::kMessageEncoding);
    auto settings = profile::parse_channel_metadata(ch.metadata);
    REQUIRE(settings.ok());
    out.channels[ch.topic] = *settings;
  }
  REQUIRE(reader->read_messages({}, [&](const recorder::MessageView& m) {
    out.messages.emplace_back(m.channel.topic, text_of(m.message.data));
    out.log_times.push_back(m.message.log_time);
    return true;
  }).ok());
  auto metadata = reader->read_metadata();
  REQUIRE(metadata.ok());
  for (const auto& md : *metadata) {
    if (md.name != profile::kRecordingMetadataName) continue;
    auto summary = profile::parse_recording_metadata(md);
    REQUIRE(summary.ok());
    out.summary = *summary;
  }
  return out;
}

std::uint64_t written(const Recording& rec) {
  std::uint64_t n = 0;
  for (const auto& c : rec.counts()) n += c.written;
  return n;
}

}  // namespace

TEST_CASE("A recording into memory reads back with its channels, closing counts and messages in order", "[recording]") {
  TestDomain domain("rec_memory");
  auto a = Publisher::create("/a", publisher_in(domain.name, Mode::Lockstep, 8));
  auto b = Publisher::create("/b", publisher_in(domain.name, Mode::FreeRun, 32));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::deque<recorder::ByteVector> files;
  RecordingOptions o;
  o.taps.domain = domain.name;
  o.taps.selection.topics = {"/a", "/b"};
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  for (int i = 0; i < 20; ++i) {
    REQUIRE(a->publish_copy(bytes_of("a" + std::to_string(i))).ok());
    REQUIRE(b->publish_copy(bytes_of("b" + std::to_string(i))).ok());
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(eventually([&] { return written(*rec) == 40; }));
  REQUIRE(rec->finish().ok());
  CHECK(rec->files() == std::vector<std::string>{"memory"});
  REQUIRE(files.size() == 1);
  CHECK(rec->bytes_written() == files[0].size());

  auto back = read_back(files[0]);
  REQUIRE(back.channels.size() == 2);
  CHECK(back.channels["/a"].mode == "lockstep");
  CHECK(back.channels["/a"].depth == 8);
  CHECK(back.channels["/a"].domain == domain.name);
  CHECK(back.channels["/b"].mode == "free-run");
  CHECK(back.channels["/b"].depth == 32);
  CHECK(back.channels["/b"].max_payload == kDefaultMaxPayload);
  REQUIRE(back.messages.size() == 40);
  CHECK(std::is_sorted(back.log_times.begin(), back.log_times.end()));
  int next_a = 0, next_b = 0;
  for (const auto& [topic, text] : back.messages) {
    if (topic == "/a") CHECK(text == "a" + std::to_string(next_a++));
    else CHECK(text == "b" + std::to_string(next_b++));
  }
  REQUIRE(back.summary);
  CHECK(back.summary->domain == domain.name);
  CHECK_FALSE(back.summary->host.empty());
  REQUIRE(back.summary->topics.size() == 2);
  for (const auto& t : back.summary->topics) {
    CHECK(t.messages == 20);
    CHECK(t.lost == 0);
  }
}

TEST_CASE("A recording finished right after a burst holds every message published before the finish, "
          "however far behind its tap was", "[recording]") {
  TestDomain domain("rec_finish_burst");
  auto pub = Publisher::create("/burst", publisher_in(domain.name, Mode::FreeRun, 64));
  REQUIRE(pub.ok());
  std::deque<recorder::ByteVector> files;
  RecordingOptions o;
  o.taps.domain = domain.name;
  o.taps.selection.topics = {"/burst"};
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  REQUIRE(eventually([&] {
    auto info = inspect_topic("/burst", domain.name);
    return info && info->count(Role::Tap) == 1;
  }));
  // Faster than a tap that has not learnt the rate checks back: most of the burst is still in the
  // ring, unread, when the recording is told to finish.
  for (int i = 0; i < 48; ++i) REQUIRE(pub->publish_copy(bytes_of("m" + std::to_string(i))).ok());
  REQUIRE(rec->finish().ok());
  REQUIRE(files.size() == 1);
  auto back = read_back(files[0]);
  REQUIRE(back.messages.size() == 48);
  for (int i = 0; i < 48; ++i) CHECK(back.messages[i].second == "m" + std::to_string(i));
  REQUIRE(back.summary);
  REQUIRE(back.summary->topics.size() == 1);
  CHECK(back.summary->topics[0].messages == 48);
  CHECK(back.summary->topics[0].lost == 0);
}

TEST_CASE("A recording split by size writes several files that together hold every message, and says each one", "[recording]") {
  TestDomain domain("rec_split");
  auto pub = Publisher::create("/split", publisher_in(domain.name));
  REQUIRE(pub.ok());
  std::deque<recorder::ByteVector> files;
  RecordingOptions o;
  o.taps.domain = domain.name;
  o.taps.selection.topics = {"/split"};
  o.taps.lockstep = true;  // about splitting, not a tap's losses: a loaded machine must not lose any
  o.writer.compression = recorder::Compression::None;
  o.writer.chunk_size = 2048;
  o.split_size = 8192;
  EventQueue events;
  o.events = &events;
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  const std::string payload(500, 'x');
  for (int i = 0; i < 100; ++i) {
    REQUIRE(pub->publish_copy(bytes_of(payload)).ok());
    std::this_thread::sleep_for(200us);
  }
  REQUIRE(eventually([&] { return written(*rec) == 100; }));
  REQUIRE(rec->finish().ok());
  CHECK(files.size() >= 3);
  CHECK(rec->files().size() == files.size());
  std::size_t total = 0;
  for (const auto& f : files) {
    auto back = read_back(f);
    total += back.messages.size();
    CHECK(back.channels.count("/split") == 1);
    REQUIRE(back.summary);  // every file closes with the counts so far
  }
  CHECK(total == 100);
  // Each file started is news about it; the topic is said to be read once, not once per file.
  std::size_t started = 0, read = 0;
  for (const auto& e : events.drain()) {
    INFO(e.message);
    CHECK(e.kind == EventKind::Info);
    if (e.subject == "memory") ++started;
    if (e.subject == "/split") ++read;
  }
  CHECK(started == files.size());
  CHECK(read == 1);
}

TEST_CASE("A recording names the topic it cannot open, and still finishes its file", "[recording]") {
  std::deque<recorder::ByteVector> files;
  RecordingOptions o;
  o.taps.selection.topics = {"bad//name"};
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  auto st = rec->start();
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("'bad//name'") != std::string::npos);
  REQUIRE(rec->finish().ok());
  auto back = read_back(files.at(0));
  CHECK(back.messages.empty());
}

TEST_CASE("File names are numbered only when a recording splits", "[recording]") {
  CHECK(numbered_file_name("run.mcap", 0, false) == "run.mcap");
  CHECK(numbered_file_name("run.mcap", 0, true) == "run_0.mcap");
  CHECK(numbered_file_name("dir/run.mcap", 12, true) == "dir/run_12.mcap");
  CHECK(numbered_file_name("run", 1, true) == "run_1");
}
