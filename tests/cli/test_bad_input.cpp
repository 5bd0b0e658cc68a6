// SPDX-License-Identifier: Apache-2.0
// Faults in what pub is given: a clear line, an exit code, and nothing published half-way.

#include <csignal>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;

TEST_CASE("Payload over the ceiling is refused and nothing is published", "[cli][pub][faults]") {
  const std::string topic = unique_topic("ceiling");
  // A publisher that only creates the topic with a 16-byte ceiling and waits (it never publishes).
  BackgroundProcess holder({cerulion_binary(), "pub", topic, "x", "--max-payload", "16", "--wait-subscribers", "5",
                            "--timeout", "60"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "--json", "--timeout", "2"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));

  auto sized = run_cerulion({"pub", topic, "--size", "17", "--once"});
  CHECK(sized.exit_code == 1);
  CHECK(sized.err.find("over the payload ceiling") != std::string::npos);

  auto lines = run_cerulion({"pub", topic}, "short\nthis line is far too long\nnext\n");
  CHECK(lines.exit_code == 1);
  CHECK(lines.err == "cerulion: message #2 is 25 bytes, over the payload ceiling of topic '" + topic +
                         "' (16 bytes); nothing of it was published\n");

  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 0);
  auto received = json_lines(echoed.out);
  REQUIRE(received.size() == 1);  // only the line before the oversized one
  CHECK(received[0]["data"] == "short");
  holder.signal(SIGINT);
  holder.wait();
}

TEST_CASE("Unreadable file is refused before the topic is touched", "[cli][pub][faults]") {
  const std::string topic = unique_topic("unreadable");
  auto result = run_cerulion({"pub", topic, "--file", "/nonexistent/payload.bin", "--once"});
  CHECK(result.exit_code == 1);
  CHECK(result.err == "cerulion: cannot read '/nonexistent/payload.bin': No such file or directory\n");
  auto directory = run_cerulion({"pub", topic, "--file", "/tmp", "--once"});
  CHECK(directory.exit_code == 1);
  CHECK(directory.err == "cerulion: cannot read '/tmp': is a directory\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Endless input to pub --file or --schema-file is refused at the ceiling in one line, nothing published",
          "[cli][pub][faults]") {
  const std::string topic = unique_topic("endless");
  auto own = run_cerulion({"pub", topic, "--file", "/dev/zero", "--max-payload", "1MiB", "--once"});
  CHECK(own.exit_code == 1);
  CHECK(own.err == "cerulion: '/dev/zero' goes on past the payload ceiling of topic '" + topic +
                       "' (1048576 bytes); nothing published\n");
  auto schema = run_cerulion({"pub", topic, "--encoding", "json", "--schema-file", "/dev/zero", "{}", "--once"});
  CHECK(schema.exit_code == 1);
  CHECK(schema.err == "cerulion: '/dev/zero' goes on past the largest schema a topic carries (16777216 bytes); "
                      "nothing published\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);

  // A topic that exists has its own ceiling, which the file is held to.
  BackgroundProcess holder({cerulion_binary(), "pub", topic, "x", "--max-payload", "16", "--wait-subscribers", "5",
                            "--timeout", "60"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  auto existing = run_cerulion({"pub", topic, "--file", "/dev/zero", "--once"});
  CHECK(existing.exit_code == 1);
  CHECK(existing.err == "cerulion: '/dev/zero' goes on past the payload ceiling of topic '" + topic +
                            "' (16 bytes); nothing published\n");
  CHECK(topic_snapshot(topic)["published"] == 0);
  holder.signal(SIGINT);
  holder.wait();
}

TEST_CASE("Endless stdin to pub --stdin whole is refused holding no more than the ceiling, not twice it",
          "[cli][pub][faults]") {
  const std::string topic = unique_topic("endless_stdin");
  const std::vector<std::string> argv{cerulion_binary(), "pub", topic, "--stdin", "whole", "--max-payload", "128MiB"};
  auto said = run_process(redirected(argv, "< /dev/zero"), {}, std::chrono::seconds(60));
  CHECK(said.exit_code == 1);
  CHECK(said.err == "cerulion: stdin message #1 is longer than the payload ceiling (134217728 bytes); nothing of it "
                    "was published\n");
  // It must hold the ceiling and a byte to know the message goes on; it held twice that before.
  const auto peak = run_for_peak_memory(argv, "/dev/zero");
  INFO(peak.max_rss_kib << " KiB at most");
  CHECK(peak.exit_code == 1);
  CHECK(peak.max_rss_kib > 128 * 1024);
  CHECK(peak.max_rss_kib < 192 * 1024);
}

TEST_CASE("pub --file on a FIFO nobody writes to waits for a writer and exits 130 on Ctrl-C", "[cli][pub][faults]") {
  const std::string fifo = "/tmp/cerulion-pub-fifo-" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string topic = unique_topic("fifo_no_writer");
  BackgroundProcess pub({cerulion_binary(), "pub", topic, "--file", fifo, "--once"});
  // Waiting in the FIFO's open, as `--file <(command)` must.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(pub.running());
  pub.signal(SIGINT);
  auto done = pub.wait(std::chrono::seconds(20));
  CHECK_FALSE(done.timed_out);
  CHECK(done.killed_by == 0);
  CHECK(done.exit_code == 130);
  CHECK(done.err.empty());
  ::unlink(fifo.c_str());
}

TEST_CASE("Stdin ending before the asked count exits one", "[cli][pub][faults]") {
  const std::string topic = unique_topic("stdin_short");
  auto result = run_cerulion({"pub", topic, "-n", "5"}, "a\nb\n");
  CHECK(result.exit_code == 1);
  CHECK(result.err == "cerulion: stdin ended after 2 of 5 messages\n");
}

TEST_CASE("Pub times out waiting for subscribers that never come", "[cli][pub][faults]") {
  const std::string topic = unique_topic("no_subscriber");
  auto result = run_cerulion({"pub", topic, "x", "--once", "--wait-subscribers", "1", "--timeout", "0.2"});
  CHECK(result.exit_code == 1);
  CHECK(result.err == "cerulion: timed out after 0.2 s waiting for 1 subscriber on '" + topic +
                         "' (0 attached)\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Echo timeout with nothing arrived exits one", "[cli][echo][faults]") {
  const std::string topic = unique_topic("echo_timeout");
  auto result = run_cerulion({"echo", topic, "--timeout", "0.2"});
  CHECK(result.exit_code == 1);
  CHECK(result.err == "cerulion: warning: topic '" + topic + "' does not exist yet; echo waits for it to be published "
                      "(Ctrl-C stops)\ncerulion: no message on '" + topic + "' within 0.2 s\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}
