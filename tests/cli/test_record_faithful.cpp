// SPDX-License-Identifier: Apache-2.0
// What `cerulion record` keeps: a topic that appears after it started, from its first message; a
// burst, losslessly, with --lockstep; and a clear word on what it could not open.

#include <catch2/catch.hpp>

#include <csignal>
#include <string>
#include <sys/stat.h>

#include "cerulion/recorder/reader.hpp"
#include "everyday_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// The sequence numbers recorded on `topic`, in file order.
std::vector<std::uint32_t> recorded_sequences(const std::string& file, const std::string& topic) {
  auto reader = recorder::Reader::open(file);
  REQUIRE(reader.ok());
  std::vector<std::uint32_t> sequences;
  auto st = reader->read_messages({}, [&](const recorder::MessageView& m) {
    if (m.channel.topic == topic) sequences.push_back(m.message.sequence);
    return true;
  });
  REQUIRE(st.ok());
  return sequences;
}

/// The value of `key` in the recording's closing metadata.
std::string closing_metadata(const std::string& file, const std::string& key) {
  auto reader = recorder::Reader::open(file);
  REQUIRE(reader.ok());
  auto metadata = reader->read_metadata();
  REQUIRE(metadata.ok());
  for (const auto& m : *metadata) {
    if (auto it = m.metadata.find(key); it != m.metadata.end()) return it->second;
  }
  return {};
}

}  // namespace

TEST_CASE("record -a records a topic that appears after it started from its first message", "[cli][record]") {
  const std::string domain = unique_domain("appear");
  const auto file = record_temp_path("appear.mcap");
  BackgroundProcess rec({cerulion_binary(), "--domain", domain, "record", "-a", "-o", file});
  std::this_thread::sleep_for(500ms);  // the recorder is listening before the topic exists
  const std::string topic = "/appears/late";
  // A ring of 512: the recorder is a tap, which on a busy machine may be descheduled longer than a
  // 16-deep ring lasts at 1 kHz (and would count that loss); this test is about the first message.
  REQUIRE(run_cerulion({"--domain", domain, "pub", topic, "--size", "16", "-r", "1000", "-n", "500", "--depth", "512"})
              .exit_code == 0);
  std::this_thread::sleep_for(300ms);
  rec.signal(SIGINT);
  auto done = rec.wait(20s);
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  auto sequences = recorded_sequences(file, topic);
  REQUIRE(!sequences.empty());
  CHECK(sequences.front() == 0);
  CHECK(sequences.size() == 500);
  CHECK(closing_metadata(file, "lost:" + topic) == "0");
}

TEST_CASE("record -a keeps or counts lost every message of topics published once by pub --once", "[cli][record]") {
  const std::string domain = unique_domain("once");
  const auto file = record_temp_path("once.mcap");
  BackgroundProcess rec({cerulion_binary(), "--domain", domain, "record", "-a", "-o", file});
  std::this_thread::sleep_for(500ms);  // the recorder is listening before the topics exist
  const int topics = 5;
  for (int i = 0; i < topics; ++i) {
    REQUIRE(run_cerulion({"--domain", domain, "pub", "/once/t" + std::to_string(i), "hello", "--once"}).exit_code == 0);
  }
  std::this_thread::sleep_for(300ms);
  rec.signal(SIGINT);
  auto done = rec.wait(20s);
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  for (int i = 0; i < topics; ++i) {
    const std::string topic = "/once/t" + std::to_string(i);
    INFO(topic);
    const auto kept = recorded_sequences(file, topic).size();
    const std::string lost = closing_metadata(file, "lost:" + topic);
    REQUIRE_FALSE(lost.empty());  // every topic is in the account, kept or not
    CHECK(kept + std::stoull(lost) == 1);
    // One missed whole is said by name.
    if (kept == 0) CHECK(done.err.find("'" + topic + "' came and went before it could be read: 1 message missed") != std::string::npos);
  }
}

TEST_CASE("record --lockstep records a burst that a tap would mostly lose", "[cli][record]") {
  const std::string topic = unique_topic("burst");
  const auto file = record_temp_path("burst.mcap");
  // A lockstep subscriber already there, as in the field: the publisher goes at its pace.
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "-n", "20000"});
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file, "--lockstep"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") >= 2; }));
  std::string lines;
  for (int i = 1; i <= 20000; ++i) lines += std::to_string(i) + "\n";
  REQUIRE(run_cerulion({"pub", topic}, lines, 60s).exit_code == 0);
  REQUIRE(echo.wait(30s).exit_code == 0);
  rec.signal(SIGINT);
  auto done = rec.wait(30s);
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  CHECK(topic_count(info_json(file), topic) == 20000);
  CHECK(done.err.find(topic + ": 20000 written, 20000 received, 0 lost") != std::string::npos);
}

TEST_CASE("record -a says what it could not open, and fails when it recorded nothing", "[cli][record]") {
  const std::string domain = unique_domain("unopenable");
  const auto file = record_temp_path("unopenable.mcap");
  const std::string planted = "/dev/shm/" + shm_file("/planted", domain);
  REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
  auto r = run_cerulion({"--domain", domain, "record", "-a", "-o", file, "--duration", "0.5"}, {}, 20s);
  ::unlink(planted.c_str());
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cerulion: cannot read topic '/planted'") != std::string::npos);
  CHECK(r.err.find("FIFO") != std::string::npos);
  CHECK(r.err.find("nothing was recorded") != std::string::npos);
}

TEST_CASE("record ends with 128 plus the signal after SIGTERM or SIGHUP, with its file finished", "[cli][record]") {
  for (int sig : {SIGTERM, SIGHUP}) {
    const std::string topic = unique_topic("rec_signal");
    const auto file = record_temp_path("signal.mcap");
    BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file});
    REQUIRE(tap_attached(topic));
    rec.signal(sig);
    auto done = rec.wait(20s);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 128 + sig);
    CHECK(info_json(file)["finalized"] == true);
  }
}
