// SPDX-License-Identifier: Apache-2.0
// Every usage error of pub, echo, topic and clean exits 2 with one line, and creates nothing.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;

TEST_CASE("Every usage error of the everyday commands exits two", "[cli][usage]") {
  const std::string topic = unique_topic("usage");
  const std::vector<std::vector<std::string>> mistakes = {
      {"pub"},                                             // no topic
      {"pub", topic, "x", "--once", "-n", "3"},            // --once excludes --times
      {"pub", topic, "x", "-n", "0"},                      // zero rounds
      {"pub", topic, "x", "-n", "many"},                   // not a number
      {"pub", topic, "x", "--file", "/etc/hostname"},      // two sources
      {"pub", topic, "--size", "4", "--stdin", "lines"},   // two sources
      {"pub", topic, "--stdin", "words"},                  // unknown framing
      {"pub", topic, "--size", "12 parsecs"},              // not a size
      {"pub", topic, "x", "--fill", "random"},             // --fill without --size
      {"pub", topic, "--size", "4", "--fill", "ones"},     // unknown fill
      {"pub", topic, "x", "--rate", "-1"},                 // negative rate
      {"pub", topic, "x", "--mode", "sometimes"},          // unknown mode
      {"pub", topic, "x", "--depth", "0"},                 // zero depth
      {"pub", topic, "x", "--timeout", "0"},               // zero timeout
      {"pub", "/a/../b", "x", "--once"},                   // topic escaping its namespace
      {"pub", topic, "x", "--no-such-option"},
      {"echo"},                                            // no topic
      {"echo", topic, "--json", "--raw"},                  // two formats
      {"echo", topic, "--separator", "\\n"},               // separator needs --raw
      {"echo", topic, "--raw", "--separator", "\\q"},      // malformed escape
      {"echo", topic, "-n", "0"},
      {"echo", topic, "--timeout", "soon"},
      {"echo", topic, "-l", "-5"},
      {"echo", "bad topic name"},
      {"topic"},                                           // no subcommand
      {"topic", "frobnicate"},
      {"topic", "info"},                                   // no topic
      {"topic", "info", "//x"},
      {"topic", "hz"},
      {"topic", "hz", topic, "-n", "0"},
      {"topic", "hz", topic, "--window", "1"},
      {"topic", "list", "extra"},
      {"clean", "--force"},                                // --force needs a topic
      {"clean", "--force", "/a/./b"},
      {"clean", "--bogus"},
  };
  for (const auto& args : mistakes) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    INFO("cerulion " << line);
    auto result = run_cerulion(args);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.rfind("cerulion: ", 0) == 0);
  }
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Pub with nothing to publish on a terminal exits two", "[cli][usage]") {
  const std::string topic = unique_topic("usage_tty");
  // `script` gives the command a terminal as stdin, where pub refuses to wait for typed input.
  auto result = run_process({"script", "-qec", "'" + cerulion_binary() + "' pub " + topic + "; echo \"exit=$?\"",
                             "/dev/null"});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("cerulion: nothing to publish") != std::string::npos);
  CHECK(result.out.find("exit=2") != std::string::npos);
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Pub from an empty pipe publishes nothing and succeeds", "[cli][usage]") {
  const std::string topic = unique_topic("usage_empty_pipe");
  auto result = run_cerulion({"pub", topic, "-v"});
  CHECK(result.exit_code == 0);
  CHECK(result.out.empty());
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Numbers an option cannot mean are refused with the option, the expectation and the value", "[cli][usage]") {
  const std::string topic = unique_topic("usage_numbers");
  struct Mistake {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Mistake> mistakes = {
      {{"pub", topic, "hi", "-n", "-1"}, "--times must be a whole number of at least 1, got '-1'"},
      {{"pub", topic, "-n", "-1"}, "--times must be a whole number of at least 1, got '-1'"},
      {{"pub", topic, "hi", "-n", "99999999999999999999999"}, "got '99999999999999999999999'"},
      {{"pub", topic, "hi", "-n", "1e3"}, "--times must be a whole number"},
      {{"pub", topic, "hi", "-r", "nan"}, "--rate must be a rate from 0"},
      {{"pub", topic, "hi", "-r", "inf"}, "--rate must be a rate from 0"},
      {{"pub", topic, "hi", "-r", "abc"}, "got 'abc'"},
      {{"pub", topic, "hi", "--timeout", "0"}, "--timeout must be a positive duration such as 30 (seconds), 5s, 500ms or 2m, got '0'"},
      {{"pub", topic, "hi", "--wait-subscribers", "-1"}, "--wait-subscribers must be a whole number from 0 to 32"},
      {{"pub", topic, "hi", "--max-payload", "2TiB"}, "--max-payload must be at most 1.0 TiB, got '2TiB'"},
      {{"pub", topic, "hi", "--depth", "5000"}, "--depth must be a whole number from 1 to 4096"},
      {{"echo", topic, "-n", "-2"}, "--count must be a whole number of at least 1, got '-2'"},
      {{"topic", "hz", topic, "-n", "-1"}, "--count must be a whole number of at least 1, got '-1'"},
      {{"ping", "--warmup", "-1", "-c", "1"}, "--warmup must be a whole number from 0"},
      {{"ping", "--timeout", "0"}, "--timeout must be a positive duration"},
      {{"ping", "--cpu-budget", "abc"}, "--cpu-budget must be a percentage of a CPU"},
      {{"echo", topic, "--timeout", "abc"}, "--timeout must be a positive duration such as 30 (seconds), 5s, 500ms or 2m, got 'abc'"},
      {{"verify", "x.mcap", "--input", "/a", "--output", "/b", "--settle", "abc", "--", "true"},
       "--settle must be a non-negative duration"},
      {{"verify", "x.mcap", "--input", "/a", "--output", "/b", "--output-timeout", "0", "--", "true"},
       "--output-timeout must be a positive duration"},
      {{"verify", "x.mcap", "--input", "/a", "--output", "/b", "--repeat", "0", "--", "true"},
       "--repeat must be a whole number from 1 to 1000"},
      {{"ping", "-r", "-5"}, "--rate must be a rate from 0"},
      {{"play", "x.mcap", "-r", "0"}, "--rate must be a speed factor greater than 0"},
      {{"record", topic, "-o", "x.mcap", "--level", "99"}, "--level must be a whole number from -7 to 19"},
      {{"bench", "--runs", "-3"}, "--runs must be a whole number from 1 to 100"},
  };
  for (const auto& mistake : mistakes) {
    std::string line;
    for (const auto& a : mistake.args) line += a + " ";
    INFO("cerulion " << line);
    auto result = run_cerulion(mistake.args);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.find(mistake.says) != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK(result.err.find("not in range") == std::string::npos);
    CHECK(result.err.find("Could not convert") == std::string::npos);
  }
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("Errors point to the help of the command that was typed", "[cli][usage]") {
  CHECK(run_cerulion({"pub", "/x", "hi", "--bogus"}).err.find("(see 'cerulion pub --help')") != std::string::npos);
  CHECK(run_cerulion({"topic", "hz", "/x", "-n", "0"}).err.find("(see 'cerulion topic hz --help')") !=
        std::string::npos);
  CHECK(run_cerulion({"--bogus"}).err.find("(see 'cerulion --help')") != std::string::npos);

  auto unknown = run_cerulion({"topic", "bogus"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err == "cerulion: unknown topic command 'bogus' (see 'cerulion topic --help')\n");
  auto missing = run_cerulion({"topic"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "cerulion: 'topic' needs a command: list, info, hz (see 'cerulion topic --help')\n");
}

TEST_CASE("Help is a command as well as an option", "[cli][usage]") {
  auto all = run_cerulion({"help"});
  CHECK(all.exit_code == 0);
  CHECK(all.out == run_cerulion({"--help"}).out);
  auto one = run_cerulion({"help", "topic", "hz"});
  CHECK(one.exit_code == 0);
  CHECK(one.out == run_cerulion({"topic", "hz", "--help"}).out);
  auto unknown = run_cerulion({"help", "frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "cerulion: no command 'frobnicate' (see 'cerulion --help')\n");
}

TEST_CASE("Control characters in a topic name or an option value or a file name are shown escaped on one line",
          "[cli][usage]") {
  const std::string odd = "a\x1b[31m\r\n\x07" "b";
  const std::vector<std::vector<std::string>> commands = {
      {"echo", "/" + odd},                                // a topic name (core's words)
      {"pub", "/x", "m", "--rate", odd},                  // an option value (CLI11's words)
      {"pub", "/x", "--file", "/nonexistent/" + odd},     // a file name (a command's words)
      {"info", "/nonexistent/" + odd + ".mcap"},          // a file name (a library's words)
      {"echo", "/x", "--domain", odd},                    // a global option's own check
  };
  for (const auto& args : commands) {
    auto r = run_cerulion(args);
    INFO(r.err);
    CHECK(r.exit_code != 0);
    REQUIRE_FALSE(r.err.empty());
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    for (char c : {'\x1b', '\r', '\x07'}) CHECK(r.err.find(c) == std::string::npos);
    CHECK(r.err.find("\\x1b[31m") != std::string::npos);
    CHECK(r.err.find("\\x0d") != std::string::npos);
    CHECK(r.err.find("\\x0a") != std::string::npos);
    CHECK(r.err.find("\\x07") != std::string::npos);
  }
}
