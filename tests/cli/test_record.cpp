// SPDX-License-Identifier: Apache-2.0
// `cerulion record` end to end: named topics, -a discovery, overwrite refusal, splitting, and a
// recorder killed with SIGKILL whose file info/play still read and recover makes whole.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;


TEST_CASE("record writes what named topics carry and info counts it", "[cli][record]") {
  auto topic = unique_topic("rec_named");
  auto file = record_temp_path("named.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file});
  REQUIRE(tap_attached(topic));
  auto pub = run_cerulion({"pub", topic, "hello", "-n", "100", "-r", "500"});
  REQUIRE(pub.exit_code == 0);
  std::this_thread::sleep_for(300ms);
  rec.signal(SIGINT);
  auto done = rec.wait(20s);
  REQUIRE(done.exit_code == 0);
  auto info = info_json(file);
  CHECK(info["finalized"] == true);
  // The closing Metadata record carries per-topic counts, the host and the version.
  nlohmann::json rec_md;
  for (const auto& m : info["metadata"]) if (m["name"] == "cerulion.recording") rec_md = m["metadata"];
  REQUIRE(rec_md.is_object());
  // A tap never holds the publisher back: on a machine too busy to run it, the ring may pass it by,
  // and what it missed is counted. Every message is in the file or counted, and the file holds what
  // the recorder says it received.
  const auto received = std::stoull(rec_md["received:" + topic].get<std::string>());
  const auto lost = std::stoull(rec_md["lost:" + topic].get<std::string>());
  CHECK(received + lost == 100);
  CHECK(received > 0);
  CHECK(topic_count(info, topic) == received);
  CHECK(info["message_count"] == received);
  CHECK(done.err.find("recorded " + std::to_string(received) + " message") != std::string::npos);
  CHECK(rec_md.contains("host"));
  CHECK(rec_md.contains("cerulion_version"));
  for (const auto& c : info["channels"]) CHECK(c["metadata"]["mode"] == "lockstep");
}

TEST_CASE("record never holds a fast publisher back and counts what it missed", "[cli][record]") {
  auto topic = unique_topic("rec_fast");
  auto file = record_temp_path("fast.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file});
  REQUIRE(tap_attached(topic));
  // As fast as lockstep allows: with only a tap attached, nothing makes the publisher wait.
  auto pub = run_cerulion({"pub", topic, "--size", "64KiB", "--fill", "random", "-n", "3000", "-r", "0"}, {}, 60s);
  REQUIRE(pub.exit_code == 0);
  std::this_thread::sleep_for(500ms);
  rec.signal(SIGINT);
  REQUIRE(rec.wait(30s).exit_code == 0);
  auto info = info_json(file);
  nlohmann::json rec_md;
  for (const auto& m : info["metadata"]) if (m["name"] == "cerulion.recording") rec_md = m["metadata"];
  REQUIRE(rec_md.is_object());
  auto received = std::stoull(rec_md["received:" + topic].get<std::string>());
  auto lost = std::stoull(rec_md["lost:" + topic].get<std::string>());
  CHECK(topic_count(info, topic) <= received);
  CHECK(topic_count(info, topic) + lost >= 3000 - 16);  // all but what was past the tap before it read
  CHECK(received + lost <= 3000);
}

TEST_CASE("record -a picks up topics that appear after it started", "[cli][record]") {
  auto domain = unique_domain("recall");
  auto file = record_temp_path("all.mcap");
  BackgroundProcess rec({cerulion_binary(), "--domain", domain, "record", "-a", "-x", "^/skip", "/named/first",
                         "-o", file});
  std::this_thread::sleep_for(500ms);
  BackgroundProcess pub({cerulion_binary(), "--domain", domain, "pub", "/late/topic", "x", "-r", "50"});
  BackgroundProcess skipped({cerulion_binary(), "--domain", domain, "pub", "/skip/me", "y", "-r", "50"});
  REQUIRE(tap_attached("/late/topic", domain));
  std::this_thread::sleep_for(500ms);
  rec.signal(SIGTERM);
  auto done = rec.wait(20s);
  REQUIRE(done.exit_code == 143);  // finished its file, and says a signal stopped it
  auto info = info_json(file);
  CHECK(topic_count(info, "/late/topic") > 5);
  for (const auto& c : info["channels"]) CHECK(c["topic"] != "/skip/me");
  // A positional topic after -x is a topic, not a second pattern.
  CHECK(done.err.find("/named/first: 0 written") != std::string::npos);
}

TEST_CASE("record refuses to overwrite a file without --force and needs topics", "[cli][record]") {
  auto file = record_temp_path("exists.mcap");
  spit(file, "precious");
  auto r = run_cerulion({"record", unique_topic("rec_x"), "-o", file, "--duration", "0.2"}, {}, 20s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("already exists") != std::string::npos);
  CHECK(slurp(file) == "precious");
  r = run_cerulion({"record", "-o", record_temp_path("none.mcap")}, {}, 20s);
  CHECK(r.exit_code == 2);
  r = run_cerulion({"record", "-e", "([", "-o", record_temp_path("bad.mcap")}, {}, 20s);
  CHECK(r.exit_code == 2);
  auto never = record_temp_path("never.mcap");
  r = run_cerulion({"record", "a//b", "-o", never}, {}, 20s);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(never));
  r = run_cerulion({"record", unique_topic("rec_f"), "-o", file, "--duration", "0.2", "-f"}, {}, 20s);
  CHECK(r.exit_code == 0);
  CHECK(info_json(file)["finalized"] == true);
}

TEST_CASE("record --split-size writes numbered files that together hold every message", "[cli][record]") {
  auto topic = unique_topic("rec_split");
  auto base = record_temp_path("split.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", base, "--split-size", "8KiB",
                         "--chunk-size", "2KiB", "--compression", "none"});
  REQUIRE(tap_attached(topic));
  REQUIRE(run_cerulion({"pub", topic, "--size", "500", "-n", "100", "-r", "1000"}).exit_code == 0);
  std::this_thread::sleep_for(300ms);
  rec.signal(SIGINT);
  REQUIRE(rec.wait(20s).exit_code == 0);
  std::string stem = base.substr(0, base.size() - 5);
  std::uint64_t total = 0;
  int files = 0;
  for (int i = 0; std::filesystem::exists(stem + "_" + std::to_string(i) + ".mcap"); ++i) {
    total += topic_count(info_json(stem + "_" + std::to_string(i) + ".mcap"), topic);
    ++files;
  }
  CHECK(files >= 3);
  CHECK(total == 100);
}

TEST_CASE("A recorder killed with SIGKILL leaves a file info and play read and recover makes whole", "[cli][record]") {
  auto topic = unique_topic("rec_killed");
  auto file = record_temp_path("killed.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file, "--chunk-size", "4KiB"});
  REQUIRE(tap_attached(topic));
  REQUIRE(run_cerulion({"pub", topic, "--size", "200", "--fill", "counter", "-n", "300", "-r", "1000"}).exit_code == 0);
  std::this_thread::sleep_for(500ms);
  rec.signal(SIGKILL);
  rec.wait(10s);
  auto info = info_json(file);
  CHECK(info["finalized"] == false);
  std::uint64_t readable = info["message_count"];
  CHECK(readable > 200);
  auto text = run_cerulion({"info", file});
  CHECK(text.out.find("NO") != std::string::npos);
  auto play = run_cerulion({"play", file, "--json", "-r", "100"}, {}, 30s);
  REQUIRE(play.exit_code == 0);
  CHECK(nlohmann::json::parse(play.out)["messages_published"] == readable);
  auto whole = record_temp_path("whole.mcap");
  REQUIRE(run_cerulion({"recover", file, "-o", whole}).exit_code == 0);
  auto fixed = info_json(whole);
  CHECK(fixed["finalized"] == true);
  CHECK(fixed["message_count"] == readable);
}

TEST_CASE("A slow disk makes record drop and count messages, never stall the publisher", "[cli][record]") {
  auto topic = unique_topic("rec_slowdisk");
  auto fifo = record_temp_path("slow.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The "disk": a reader taking 64 KiB every 50 ms for 4 s, then everything at full speed.
  BackgroundProcess slow({"/bin/sh", "-c",
                          "exec < \"$0\"; end=$(($(date +%s)+4)); while [ $(date +%s) -lt $end ]; do "
                          "dd bs=65536 count=1 of=/dev/null 2>/dev/null; sleep 0.05; done; cat > /dev/null",
                          fifo});
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", fifo, "-f", "--compression", "none"});
  REQUIRE(tap_attached(topic));
  auto started = std::chrono::steady_clock::now();
  auto pub = run_cerulion({"pub", topic, "--size", "256KiB", "-n", "1600", "-r", "800"}, {}, 60s);
  auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(pub.exit_code == 0);
  CHECK(took < 3500ms);  // 2 s of publishing at 800 Hz: the disk never slowed it down
  rec.signal(SIGINT);
  auto done = rec.wait(60s);
  REQUIRE(done.exit_code == 0);
  INFO(done.err);
  auto at = done.err.find(" dropped: disk behind");
  REQUIRE(at != std::string::npos);
  auto open = done.err.rfind('(', at);
  auto missed_end = done.err.find(" missed", open);
  auto drops_start = done.err.find(", ", missed_end) + 2;
  CHECK(std::stoull(done.err.substr(drops_start, at - drops_start)) > 0);
  slow.wait(30s);
}

TEST_CASE("record --split-duration starts a new numbered file every interval", "[cli][record]") {
  auto topic = unique_topic("rec_splitdur");
  auto base = record_temp_path("dur.mcap");
  BackgroundProcess pub({cerulion_binary(), "pub", topic, "tick", "-r", "50"});
  auto r = run_cerulion({"record", topic, "-o", base, "--split-duration", "0.5", "--duration", "2.2"}, {}, 30s);
  REQUIRE(r.exit_code == 0);
  std::string stem = base.substr(0, base.size() - 5);
  int files = 0;
  for (int i = 0; std::filesystem::exists(stem + "_" + std::to_string(i) + ".mcap"); ++i) {
    CHECK(info_json(stem + "_" + std::to_string(i) + ".mcap")["finalized"] == true);
    ++files;
  }
  CHECK(files >= 3);
  CHECK(files <= 6);
}
