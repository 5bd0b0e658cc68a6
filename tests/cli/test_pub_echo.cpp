// SPDX-License-Identifier: Apache-2.0
// pub and echo through the real binary, in shell pipelines, as a person would use them.

#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;
using nlohmann::json;

namespace {

std::string bin() { return cerulion_binary(); }

/// `echo` in the background, with `pub --wait-subscribers` sure to find it.
BackgroundProcess start_echo(const std::string& topic, std::vector<std::string> options) {
  std::vector<std::string> argv{bin(), "echo", topic};
  argv.insert(argv.end(), options.begin(), options.end());
  return BackgroundProcess(argv);
}

/// What echo says once on stderr when it starts on a topic that does not exist yet.
std::string not_published_yet(const std::string& topic) {
  return "cerulion: warning: topic '" + topic + "' does not exist yet; echo waits for it to be published (Ctrl-C stops)\n";
}

std::string temp_path(const std::string& stem) {
  return "/tmp/cerulion-" + stem + "-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}());
}

}  // namespace

TEST_CASE("Echo receives every line in order in lockstep", "[cli][pub][echo]") {
  const std::string topic = unique_topic("lockstep_lines");
  auto echo = start_echo(topic, {"-n", "100000", "--json"});
  auto pub = run_process({"sh", "-c",
                          "seq 1 100000 | '" + bin() + "' pub " + topic + " --wait-subscribers 1 --timeout 20"},
                         {}, std::chrono::seconds(120));
  REQUIRE(pub.exit_code == 0);
  CHECK(pub.out.empty());  // quiet by default
  auto echoed = echo.wait(std::chrono::seconds(120));
  REQUIRE(echoed.exit_code == 0);
  auto lines = json_lines(echoed.out);
  REQUIRE(lines.size() == 100000);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i);
    REQUIRE(lines[i]["data"] == std::to_string(i + 1));
    REQUIRE(lines[i]["seq"] == lines[0]["seq"].get<std::uint64_t>() + i);
    REQUIRE(lines[i]["lost_before"] == 0);
    REQUIRE(lines[i]["topic"] == topic);
    REQUIRE(lines[i]["size"] == std::to_string(i + 1).size());
  }
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Raw round trips a binary file byte for byte", "[cli][pub][echo]") {
  const std::string topic = unique_topic("raw_file");
  std::string content(300000, '\0');
  std::mt19937 random(42);
  for (auto& c : content) c = static_cast<char>(random());
  const std::string path = temp_path("raw-in");
  std::ofstream(path, std::ios::binary) << content;

  auto echo = start_echo(topic, {"--raw", "-n", "1"});
  auto pub = run_cerulion({"pub", topic, "--file", path, "--once", "--wait-subscribers", "1", "--timeout", "20"});
  ::unlink(path.c_str());
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(echoed.out.size() == content.size());
  CHECK(echoed.out == content);
}

TEST_CASE("Raw with a separator writes it after every message", "[cli][pub][echo]") {
  const std::string topic = unique_topic("raw_separator");
  auto echo = start_echo(topic, {"--raw", "--separator", "\\0", "-n", "2"});
  auto pub = run_cerulion({"pub", topic, "a b", "c", "--once", "--wait-subscribers", "1", "--timeout", "20"});
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(echoed.out == std::string("a b\0c\0", 6));
}

TEST_CASE("Stdin null splits messages at nul bytes only", "[cli][pub][echo]") {
  const std::string topic = unique_topic("stdin_null");
  auto echo = start_echo(topic, {"--json", "-n", "3"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "null", "--wait-subscribers", "1", "--timeout", "20"},
                          std::string("one\0two lines\nstill two\0three", 30));
  REQUIRE(pub.exit_code == 0);
  auto lines = json_lines(echo.wait().out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["data"] == "one");
  CHECK(lines[1]["data"] == "two lines\nstill two");
  CHECK(lines[2]["data"] == "three");
}

TEST_CASE("Stdin whole publishes all of stdin as one message", "[cli][pub][echo]") {
  const std::string topic = unique_topic("stdin_whole");
  auto echo = start_echo(topic, {"--json", "--timeout", "2"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "whole", "--wait-subscribers", "1", "--timeout", "20"},
                          "a\nb\nc\n");
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 0);
  auto lines = json_lines(echoed.out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["data"] == "a\nb\nc\n");
}

TEST_CASE("Free run with a slowed-down subscriber reports the exact lost count", "[cli][pub][echo]") {
  const std::string topic = unique_topic("free_run_lost");
  const int published = 300;
  auto echo = start_echo(topic, {"--json", "--lost", "--delay", "0.05", "--timeout", "1"});
  std::string input;
  for (int i = 1; i <= published; ++i) input += std::to_string(i) + "\n";
  auto pub = run_cerulion({"pub", topic, "--mode", "free-run", "--wait-subscribers", "1", "--timeout", "20"}, input);
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  auto lines = json_lines(echoed.out);
  REQUIRE(!lines.empty());

  std::uint64_t lost = lines[0]["seq"].get<std::uint64_t>();  // messages before the first one it got
  CHECK(lines[0]["lost_before"] == lost);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto gap = lines[i]["seq"].get<std::uint64_t>() - lines[i - 1]["seq"].get<std::uint64_t>() - 1;
    CHECK(lines[i]["lost_before"] == gap);  // every gap is reported where it happened
    lost += gap;
  }
  CHECK(lines.size() + lost == static_cast<std::size_t>(published));
  CHECK(lost > 0);  // a subscriber sleeping 50 ms per message cannot keep up with a burst of 300
  CHECK(lines.back()["data"] == std::to_string(published));  // the newest message is never the one lost
  CHECK(echoed.err.find("lost " + std::to_string(lost) + (lost == 1 ? " message" : " messages") +
                        " in total, received " + std::to_string(lines.size())) != std::string::npos);
}

TEST_CASE("Text mode shows text as it is and binary as a hex preview", "[cli][pub][echo]") {
  const std::string topic = unique_topic("text_mode");
  auto echo = start_echo(topic, {"-n", "3", "-l", "4"});
  REQUIRE(run_cerulion({"pub", topic, "hey", "--once", "--wait-subscribers", "1", "--timeout", "20"}).exit_code == 0);
  REQUIRE(run_cerulion({"pub", topic, "abcdefgh", "--once"}).exit_code == 0);
  REQUIRE(run_cerulion({"pub", topic, "--size", "6", "--fill", "counter", "--once"}).exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(text_lines(echoed.out) == std::vector<std::string>{"hey", "abcd... [8 B]", "[6 B] 00 00 00 00 ..."});
}

TEST_CASE("JSON carries invalid UTF-8 as base64", "[cli][pub][echo]") {
  const std::string topic = unique_topic("json_base64");
  auto echo = start_echo(topic, {"--json", "-n", "1"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "whole", "--wait-subscribers", "1", "--timeout", "20"},
                          "\xff\xfe" "abc");
  REQUIRE(pub.exit_code == 0);
  auto lines = json_lines(echo.wait().out);
  REQUIRE(lines.size() == 1);
  CHECK_FALSE(lines[0].contains("data"));
  CHECK(lines[0]["data_base64"] == "//5hYmM=");
  CHECK(lines[0]["size"] == 5);
}

TEST_CASE("Verbose pub says what it published", "[cli][pub]") {
  const std::string topic = unique_topic("verbose");
  auto pub = run_cerulion({"pub", topic, "hello", "-n", "2", "-r", "0", "-v"});
  REQUIRE(pub.exit_code == 0);
  CHECK(pub.out == "published #0 (5 bytes)\npublished #1 (5 bytes)\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);  // the last participant's exit unlinked the segment
}

TEST_CASE("Echo started after the publisher gets messages from then on", "[cli][pub][echo]") {
  const std::string topic = unique_topic("late_echo");
  BackgroundProcess pub({bin(), "pub", topic, "tick", "-r", "50"});
  REQUIRE(eventually([&] {
    auto snapshot = topic_snapshot(topic);
    return !snapshot.is_null() && snapshot["published"].get<int>() >= 5;
  }));
  auto echoed = run_cerulion({"echo", topic, "--json", "-n", "3", "--timeout", "10"});
  REQUIRE(echoed.exit_code == 0);
  auto lines = json_lines(echoed.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["seq"].get<int>() >= 5);
  CHECK(lines[1]["seq"] == lines[0]["seq"].get<int>() + 1);
  CHECK(lines[2]["seq"] == lines[0]["seq"].get<int>() + 2);
  pub.signal(SIGINT);
  CHECK(pub.wait().exit_code == 130);
}

TEST_CASE("Echo piped into head ends quietly", "[cli][echo]") {
  const std::string topic = unique_topic("head");
  BackgroundProcess pub({bin(), "pub", topic, "tick", "-r", "200", "--wait-subscribers", "1", "--timeout", "20"});
  // Attached first, so that echo has nothing to warn of either.
  REQUIRE(eventually([&] {
    auto snapshot = topic_snapshot(topic);
    if (snapshot.is_null()) return false;
    for (const auto& p : snapshot["participants"])
      if (p["role"] == "publisher" && p["alive"] == true) return true;
    return false;
  }));
  auto piped = run_process({"bash", "-c", "set -o pipefail; '" + bin() + "' echo " + topic + " | head -n 3"});
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  CHECK(text_lines(piped.out) == std::vector<std::string>{"tick", "tick", "tick"});
  pub.signal(SIGINT);
  CHECK(pub.wait().exit_code == 130);
}

TEST_CASE("Ctrl-C ends echo with exit code 130", "[cli][echo]") {
  const std::string topic = unique_topic("ctrl_c");
  auto echo = start_echo(topic, {});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));
  echo.signal(SIGINT);
  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 130);
  CHECK(echoed.err == not_published_yet(topic));  // and nothing about the signal
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Echo on a topic nothing was published on says so once, waits, and prints its first message",
          "[cli][echo]") {
  const std::string topic = unique_topic("typo");
  auto first = start_echo(topic, {"-n", "1"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));
  // A second reader finds the topic the first one made, still without a publisher.
  auto second = start_echo(topic, {"-n", "1"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 2; }));
  REQUIRE(run_cerulion({"pub", topic, "hi", "--once", "--wait-subscribers", "2", "--timeout", "20"}).exit_code == 0);
  auto made = first.wait();
  CHECK(made.exit_code == 0);
  CHECK(made.out == "hi\n");
  CHECK(made.err == not_published_yet(topic));
  auto joined = second.wait();
  CHECK(joined.exit_code == 0);
  CHECK(joined.out == "hi\n");
  CHECK(joined.err == "cerulion: warning: topic '" + topic + "' has no publisher yet; echo waits for one (Ctrl-C stops)\n");
}

TEST_CASE("Killing a publisher mid stream leaves echo running and the next pub works", "[cli][pub][echo]") {
  const std::string topic = unique_topic("kill_pub");
  auto echo = start_echo(topic, {"--json"});
  {
    BackgroundProcess first({bin(), "pub", topic, "first", "-r", "100", "--wait-subscribers", "1", "--timeout", "20"});
    REQUIRE(eventually([&] {
      auto snapshot = topic_snapshot(topic);
      return !snapshot.is_null() && snapshot["published"].get<int>() >= 5;
    }));
    first.signal(SIGKILL);
    CHECK(first.wait().exit_code == 128 + SIGKILL);
  }
  auto second = run_cerulion({"pub", topic, "second", "-n", "3", "-r", "0", "--timeout", "10"});
  REQUIRE(second.exit_code == 0);
  REQUIRE(eventually([&] { return subscribers_caught_up(topic_snapshot(topic)); }));
  REQUIRE(echo.running());
  echo.signal(SIGINT);
  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 130);
  auto lines = json_lines(echoed.out);
  REQUIRE(lines.size() >= 8);
  for (std::size_t i = 0; i + 3 < lines.size(); ++i) CHECK(lines[i]["data"] == "first");
  for (std::size_t i = lines.size() - 3; i < lines.size(); ++i) CHECK(lines[i]["data"] == "second");
  for (std::size_t i = 1; i < lines.size(); ++i) CHECK(lines[i]["seq"] == lines[i - 1]["seq"].get<int>() + 1);
}

TEST_CASE("A message with a newline is one line in text mode", "[cli][echo]") {
  const std::string topic = unique_topic("text_escapes");
  auto echo = start_echo(topic, {"-n", "2", "-l", "0"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "null", "--wait-subscribers", "1", "--timeout", "20"},
                          std::string("line one\nline two\r\n") + '\0' + "tab\there, back\\slash");
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(echoed.out == "line one\\nline two\\r\\n\ntab\\there, back\\\\slash\n");
}

TEST_CASE("A cut message in text mode is still one line, its escapes whole", "[cli][echo]") {
  const std::string topic = unique_topic("text_escapes_cut");
  auto echo = start_echo(topic, {"-n", "1", "-l", "3"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "whole", "--wait-subscribers", "1", "--timeout", "20"},
                          "a\nb\nc\n");
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(echoed.out == "a\\nb... [6 B]\n");
}

TEST_CASE("Raw output keeps a message's newlines and adds none", "[cli][echo]") {
  const std::string topic = unique_topic("raw_newlines");
  auto echo = start_echo(topic, {"--raw", "-n", "1"});
  auto pub = run_cerulion({"pub", topic, "--stdin", "whole", "--wait-subscribers", "1", "--timeout", "20"},
                          "a\r\nb\\n\n");
  REQUIRE(pub.exit_code == 0);
  auto echoed = echo.wait();
  REQUIRE(echoed.exit_code == 0);
  CHECK(echoed.out == "a\r\nb\\n\n");
}

TEST_CASE("Lines piped into pub come back as lines from echo, raw with a newline separator or as text",
          "[cli][pub][echo]") {
  const std::string topic = unique_topic("lines_back");
  const std::string count = "20000";
  BackgroundProcess raw_lines({"sh", "-c", "'" + bin() + "' echo " + topic + " --raw --separator '\\n' -n " + count});
  BackgroundProcess raw_count(
      {"sh", "-c", "'" + bin() + "' echo " + topic + " --raw --separator '\\n' -n " + count + " | wc -l"});
  BackgroundProcess text_count({"sh", "-c", "'" + bin() + "' echo " + topic + " -n " + count + " | wc -l"});
  auto pub = run_process({"sh", "-c", "seq 1 " + count + " | '" + bin() + "' pub " + topic +
                                          " --wait-subscribers 3 --timeout 20"},
                         {}, std::chrono::seconds(120));
  REQUIRE(pub.exit_code == 0);
  auto lines = raw_lines.wait(std::chrono::seconds(120));
  REQUIRE(lines.exit_code == 0);
  auto seq = run_process({"seq", "1", count});
  CHECK(lines.out == seq.out);  // byte for byte what went into pub
  CHECK(raw_count.wait(std::chrono::seconds(120)).out == count + "\n");
  CHECK(text_count.wait(std::chrono::seconds(120)).out == count + "\n");
}

TEST_CASE("Verbose pub says 1 byte for a one-byte message", "[cli][pub]") {
  const std::string topic = unique_topic("verbose_one_byte");
  auto pub = run_cerulion({"pub", topic, "x", "--once", "-v"});
  REQUIRE(pub.exit_code == 0);
  CHECK(pub.out == "published #0 (1 byte)\n");
}

TEST_CASE("pub -r keeps its rate over a few seconds, never faster, and Ctrl-C ends it", "[cli][pub]") {
  const std::string topic = unique_topic("rate");
  BackgroundProcess pub({bin(), "pub", topic, "tick", "-r", "20"});
  auto published = [&] {
    auto snapshot = topic_snapshot(topic);
    return snapshot.is_null() ? -1 : snapshot["published"].get<int>();
  };
  REQUIRE(eventually([&] { return published() >= 1; }));
  const auto before = std::chrono::steady_clock::now();
  const int first = published();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int last = published();
  const double window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  INFO(last - first << " messages in at most " << window_s << " s");
  // A pacer is never early: at most one message per period (and one for the edges).
  CHECK(last - first <= static_cast<int>(20 * window_s) + 2);
  // And not far late, with room for a loaded machine: 2 s at 20 Hz is 40.
  CHECK(last - first >= 10);
  pub.signal(SIGINT);
  CHECK(pub.wait().exit_code == 130);
}
