// SPDX-License-Identifier: Apache-2.0
// Playbacks of recordings held in memory onto real topics: every message in log-time order, the
// recorded types and settings, selection, offsets, loops, and the errors of a topic that refuses.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <unistd.h>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/playback.hpp"
#include "helpers.hpp"
#include "require_ok.hpp"
#include "topic_types.hpp"

using namespace cerulion;
using namespace cerulion::recording;
using namespace cerulion::test;
using namespace std::chrono_literals;
namespace profile = cerulion::recorder::profile;

namespace {

constexpr std::uint64_t kStart = 1'700'000'000'000'000'000ull;

/// One channel of a recording written for a test.
struct RecordedTopic {
  RecordedTopic(std::string name, TopicType t = {}, recorder::KeyValueMap md = {})
      : topic(std::move(name)), type(std::move(t)), metadata(std::move(md)) {}
  std::string topic;
  TopicType type;  // raw by default
  recorder::KeyValueMap metadata;
};

/// A recording in memory: `per_topic` messages on each topic, "<topic>#<i>", log times interleaved
/// `step_ns` apart across the topics and written in reverse, so file order is not log-time order.
struct MemoryRecording {
  recorder::ByteVector bytes;

  MemoryRecording(const std::vector<RecordedTopic>& topics, int per_topic, std::uint64_t step_ns = 1'000'000) {
    auto writer = recorder::Writer::create(std::make_unique<recorder::MemorySink>(bytes));
    REQUIRE(writer.ok());
    profile::SchemaIds schemas;
    std::vector<std::uint16_t> channels;
    for (const auto& t : topics) {
      const auto type = profile::channel_type(t.type);
      auto schema = profile::schema_id(*writer, schemas, type.schema);
      REQUIRE(schema.ok());
      auto channel = writer->add_channel(t.topic, type.message_encoding, *schema, t.metadata);
      REQUIRE(channel.ok());
      channels.push_back(*channel);
    }
    for (int i = per_topic - 1; i >= 0; --i) {
      for (std::size_t c = topics.size(); c-- > 0;) {
        const std::string payload = topics[c].topic + "#" + std::to_string(i);
        const std::uint64_t time = kStart + (static_cast<std::uint64_t>(i) * topics.size() + c) * step_ns;
        requireOk(writer->write(channels[c], static_cast<std::uint32_t>(i), time, time, bytes_of(payload)));
      }
    }
    requireOk(writer->close());
  }

  recorder::Reader reader() const {
    auto reader = recorder::Reader::open_memory(bytes);
    REQUIRE(reader.ok());
    return std::move(*reader);
  }
};

PlaybackOptions played_in(const std::string& domain) {
  PlaybackOptions o;
  o.domain = domain;
  return o;
}

Subscriber subscribed(const std::string& topic, const std::string& domain) {
  SubscriberOptions o;
  o.topic.domain = domain;
  auto sub = Subscriber::create(topic, o);
  REQUIRE(sub.ok());
  return std::move(*sub);
}

/// What `subscriber` holds now, oldest first.
std::vector<std::string> drained(Subscriber& subscriber) {
  std::vector<std::string> got;
  for (;;) {
    auto sample = subscriber.try_receive();
    REQUIRE(sample.ok());
    if (!*sample) return got;
    got.push_back(text_of((*sample)->data()));
  }
}

std::vector<std::string> expected(const std::string& topic, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(topic + "#" + std::to_string(i));
  return out;
}

Playback created(const MemoryRecording& recording, PlaybackOptions options) {
  auto playback = Playback::create(recording.reader(), std::move(options));
  requireOk(playback.status());
  return std::move(*playback);
}

/// The message of the one event said, a warning about `topic`.
std::string only_warning_about(const std::vector<Event>& events, const std::string& topic) {
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == EventKind::Warning);
  CHECK(events[0].subject == topic);
  return events[0].message;
}

/// Plays `recording` into `domain` to its end; what the playback said.
std::vector<Event> played_saying(const MemoryRecording& recording, const std::string& domain) {
  EventQueue events;
  auto options = played_in(domain);
  options.events = &events;
  auto playback = created(recording, options);
  requireOk(playback.run());
  return events.drain();
}

}  // namespace

TEST_CASE("A playback republishes every recorded message on its topic in log-time order, and counts them",
          "[recording][playback]") {
  TestDomain domain("playback");
  MemoryRecording recording({{"/a"}, {"/b"}}, 5);
  auto a = subscribed("/a", domain.name);
  auto b = subscribed("/b", domain.name);
  auto playback = created(recording, played_in(domain.name));
  requireOk(playback.run());
  CHECK(drained(a) == expected("/a", 0, 5));
  CHECK(drained(b) == expected("/b", 0, 5));
  CHECK(playback.published() == 10);
  CHECK(playback.passes() == 1);
  CHECK_FALSE(playback.interrupted());
  const auto counts = playback.counts();
  REQUIRE(counts.size() == 2);
  CHECK(counts[0].topic == "/a");
  CHECK(counts[0].published == 5);
  CHECK(counts[1].topic == "/b");
  CHECK(counts[1].published == 5);
}

TEST_CASE("A playback is paced by the recorded log times divided by its rate", "[recording][playback]") {
  TestDomain domain("playback_pace");
  MemoryRecording recording({{"/paced"}}, 5, 100'000'000);  // 400 ms from first to last
  auto sub = subscribed("/paced", domain.name);
  auto options = played_in(domain.name);
  double rate = 1;
  SECTION("at the recorded speed") { rate = 1; }
  SECTION("twice as fast") { rate = 2; }
  options.rate = rate;
  auto playback = created(recording, options);
  const auto began = std::chrono::steady_clock::now();
  requireOk(playback.run());
  // Never sooner than the recording says (later is the machine's business, not asserted).
  CHECK(std::chrono::steady_clock::now() - began >= std::chrono::duration<double>(0.4 / rate));
  CHECK(drained(sub).size() == 5);
}

TEST_CASE("A playback plays only the topics it selects, from its start offset", "[recording][playback]") {
  TestDomain domain("playback_select");
  MemoryRecording recording({{"/keep"}, {"/skip"}}, 6);
  auto keep = subscribed("/keep", domain.name);
  auto options = played_in(domain.name);
  options.selection = {.topics = {"/keep"}};
  SECTION("from the beginning") {
    auto playback = created(recording, options);
    requireOk(playback.run());
    CHECK(drained(keep) == expected("/keep", 0, 6));
  }
  SECTION("skipping the first messages' log times") {
    options.start_offset_ns = 2 * 2 * 1'000'000;  // two messages of each topic
    auto playback = created(recording, options);
    requireOk(playback.run());
    CHECK(drained(keep) == expected("/keep", 2, 6));
  }
  CHECK_FALSE(inspect_topic("/skip", domain.name).ok());
}

TEST_CASE("A playback that selects none of the recording's topics, has a bad pattern or no positive rate, is refused",
          "[recording][playback]") {
  TestDomain domain("playback_refused");
  MemoryRecording recording({{"/only"}}, 2);
  auto options = played_in(domain.name);
  SECTION("a selection matching nothing") {
    options.selection = {.include = {"^/elsewhere/"}};
    CHECK(Playback::create(recording.reader(), options).code() == ErrorCode::NotFound);
  }
  SECTION("a pattern that is not a regular expression") {
    options.selection = {.include = {"(["}};
    auto refused = Playback::create(recording.reader(), options);
    CHECK(refused.code() == ErrorCode::InvalidArgument);
    CHECK(refused.message().find("'(['") != std::string::npos);
  }
  SECTION("a rate of zero") {
    options.rate = 0;
    CHECK(Playback::create(recording.reader(), options).code() == ErrorCode::InvalidArgument);
  }
  CHECK_FALSE(inspect_topic("/only", domain.name).ok());
}

TEST_CASE("A looping playback starts over until cancelled, says it was, and tells its progress meanwhile",
          "[recording][playback]") {
  TestDomain domain("playback_loop");
  MemoryRecording recording({{"/loop"}}, 3);
  auto sub = subscribed("/loop", domain.name);  // a lockstep topic: nothing published is lost
  std::atomic<bool> cancel{false};
  auto options = played_in(domain.name);
  options.loop = true;
  options.cancel = &cancel;
  auto playback = created(recording, options);
  Status played;
  std::thread player([&] { played = playback.run(); });
  // The test's thread asks for progress while the playback plays on its own.
  std::vector<std::string> got;
  std::uint64_t last_published = 0, last_pass = 0;
  while (got.size() < 7) {
    auto sample = sub.receive(std::chrono::seconds(20));
    if (!sample.ok()) break;
    got.push_back(text_of(sample->data()));
    const PlaybackProgress p = playback.progress();
    CHECK(p.published + 1 >= got.size());  // the message in hand may be counted just after it arrived
    CHECK(p.published >= last_published);
    CHECK(p.pass >= last_pass);
    CHECK(p.duration_ns == 2'000'000);
    last_published = p.published;
    last_pass = p.pass;
  }
  cancel = true;
  player.join();
  requireOk(played);
  REQUIRE(got.size() == 7);
  CHECK(playback.interrupted());
  CHECK(playback.passes() >= 3);
  CHECK(playback.progress().published == playback.published());
  for (const auto& rest : drained(sub)) got.push_back(rest);
  REQUIRE(got.size() == playback.published());
  const auto pass = expected("/loop", 0, 3);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == pass[i % 3]);
}

TEST_CASE("A playback creates its topics with the recorded type and settings", "[recording][playback]") {
  TestDomain domain("playback_type");
  profile::TopicSettings settings;
  settings.mode = "free-run";
  settings.depth = 4;
  settings.max_payload = 1 << 20;
  MemoryRecording recording({{"/imu", imu_json_type(), profile::channel_metadata(settings)}, {"/raw"}}, 2);
  auto playback = created(recording, played_in(domain.name));
  requireOk(playback.run());
  auto imu = inspect_topic("/imu", domain.name);
  requireOk(imu.status());
  CHECK(imu->type == imu_json_type());
  CHECK(imu->mode == Mode::FreeRun);
  CHECK(imu->depth == 4);
  CHECK(imu->max_payload == 1 << 20);
  auto raw = inspect_topic("/raw", domain.name);
  requireOk(raw.status());
  CHECK_FALSE(raw->type_declared);
}

TEST_CASE("A lockstep playback creates lockstep topics with room for one message", "[recording][playback]") {
  TestDomain domain("playback_lockstep");
  profile::TopicSettings settings;
  settings.mode = "free-run";
  settings.depth = 8;
  MemoryRecording recording({{"/step", {}, profile::channel_metadata(settings)}}, 3);
  auto options = played_in(domain.name);
  options.lockstep = true;
  auto playback = created(recording, options);
  requireOk(playback.run());
  auto info = inspect_topic("/step", domain.name);
  requireOk(info.status());
  CHECK(info->mode == Mode::Lockstep);
  CHECK(info->depth == 1);
}

TEST_CASE("A playback into a topic of another type is Incompatible, naming the topic, and publishes nothing there",
          "[recording][playback]") {
  TestDomain domain("playback_clash");
  MemoryRecording recording({{"/imu", imu_json_type()}}, 2);
  PublisherOptions other;
  other.topic.domain = domain.name;
  other.topic.type = pose_json_type();
  auto holder = Publisher::create("/imu", other);
  requireOk(holder.status());
  auto playback = created(recording, played_in(domain.name));
  const Status st = playback.run();
  CHECK(st.code() == ErrorCode::Incompatible);
  CHECK(st.message().find("'/imu'") != std::string::npos);
  CHECK(playback.published() == 0);
}

TEST_CASE("A playback warns once of what it cannot honour, and plays the messages anyway", "[recording][playback]") {
  TestDomain domain("playback_warn");
  std::vector<RecordedTopic> topics;
  std::string about;
  SECTION("recorded settings that do not read back") {
    topics.push_back({"/odd", {}, {{"depth", "many"}}});
    about = "its recorded topic settings are ignored";
  }
  SECTION("an encoding a topic cannot declare") {
    topics.push_back({"/odd", TopicType{"mystery-encoding", {}}});
    about = "its messages are played as raw bytes";
  }
  SECTION("a recorded mode it does not know") {
    topics.push_back({"/odd", {}, {{"mode", "sideways"}}});
    about = "recorded mode 'sideways' is unknown";
  }
  MemoryRecording recording(topics, 3);
  auto sub = subscribed("/odd", domain.name);
  const auto warning = only_warning_about(played_saying(recording, domain.name), "/odd");
  CHECK(warning.find("'/odd'") != std::string::npos);
  CHECK(warning.find(about) != std::string::npos);
  CHECK(drained(sub) == expected("/odd", 0, 3));
}

TEST_CASE("A playback into a topic with live publishers of its own warns once, naming their pids, and plays anyway",
          "[recording][playback]") {
  TestDomain domain("playback_interleave");
  MemoryRecording recording({{"/imu"}}, 3);
  std::vector<Publisher> holders;
  const int publishers = GENERATE(1, 2);
  for (int i = 0; i < publishers; ++i) {
    auto holder = Publisher::create("/imu", publisher_in(domain.name));
    REQUIRE(holder.ok());
    holders.push_back(std::move(*holder));
  }
  auto sub = subscribed("/imu", domain.name);
  const auto warning = only_warning_about(played_saying(recording, domain.name), "/imu");
  const std::string pid = std::to_string(::getpid());
  CHECK(warning == (publishers == 1 ? "'/imu' already has a live publisher (pid " + pid + "): its"
                                 : "'/imu' already has live publishers (pid " + pid + "): their") +
                        std::string(" messages and the played ones interleave"));
  CHECK(drained(sub) == expected("/imu", 0, 3));
}

TEST_CASE("A playback into a topic whose publishers are gone, or that only subscribers use, says nothing of them",
          "[recording][playback]") {
  TestDomain domain("playback_no_interleave");
  MemoryRecording recording({{"/imu"}}, 3);
  REQUIRE(Publisher::create("/imu", publisher_in(domain.name)).ok());  // made and closed
  auto sub = subscribed("/imu", domain.name);
  CHECK(played_saying(recording, domain.name).empty());
  CHECK(drained(sub) == expected("/imu", 0, 3));
}

TEST_CASE("An unpaced playback calls before_publish before each message, with its publisher, and stops on its error",
          "[recording][playback]") {
  TestDomain domain("playback_hook");
  // 10 s of log time: played unpaced, the test does not wait for it.
  MemoryRecording recording({{"/h1"}, {"/h2"}}, 3, 1'000'000'000);
  auto h1 = subscribed("/h1", domain.name);
  auto h2 = subscribed("/h2", domain.name);
  auto options = played_in(domain.name);
  options.paced = false;
  std::vector<std::string> seen;
  std::size_t fail_at = 100;
  SECTION("every message") {}
  SECTION("an error stops it") { fail_at = 3; }
  options.before_publish = [&](const recorder::MessageView& m, Publisher& publisher) -> Status {
    CHECK(publisher.topic() == m.channel.topic);
    // What came before this message is published already; this one is not.
    CHECK(publisher.subscriber_count() == 1);
    if (seen.size() == fail_at) return Status(ErrorCode::InvalidArgument, "stop here");
    seen.push_back(m.channel.topic);
    return {};
  };
  auto playback = created(recording, options);
  const Status st = playback.run();
  if (fail_at == 3) {
    CHECK(st.code() == ErrorCode::InvalidArgument);
    CHECK(playback.published() == 3);
    CHECK(seen == std::vector<std::string>{"/h1", "/h2", "/h1"});
  } else {
    requireOk(st);
    CHECK(playback.published() == 6);
    CHECK(seen == std::vector<std::string>{"/h1", "/h2", "/h1", "/h2", "/h1", "/h2"});
    CHECK(drained(h1) == expected("/h1", 0, 3));
    CHECK(drained(h2) == expected("/h2", 0, 3));
  }
}

TEST_CASE("A lockstep playback whose subscriber takes nothing fails at its publish timeout, naming the topic",
          "[recording][playback]") {
  TestDomain domain("playback_timeout");
  MemoryRecording recording({{"/stuck"}}, 40);
  auto stuck = subscribed("/stuck", domain.name);  // never receives: its ring fills
  auto options = played_in(domain.name);
  options.paced = false;
  options.lockstep = true;
  options.publish_timeout = std::chrono::milliseconds(200);
  auto playback = created(recording, options);
  const Status st = playback.run();
  CHECK(st.code() == ErrorCode::Timeout);
  CHECK(st.message().find("'/stuck'") != std::string::npos);
  CHECK(playback.published() < 40);
}
