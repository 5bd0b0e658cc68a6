// Every usage error of pub, echo, topic and clean exits 2 with one line, and creates nothing.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;

TEST_CASE("EveryUsageErrorOfTheEverydayCommandsExitsTwo", "[cli][usage]") {
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

TEST_CASE("PubWithNothingToPublishOnATerminalExitsTwo", "[cli][usage]") {
  const std::string topic = unique_topic("usage_tty");
  // `script` gives the command a terminal as stdin, where pub refuses to wait for typed input.
  auto result = run_process({"script", "-qec", "'" + cerulion_binary() + "' pub " + topic + "; echo \"exit=$?\"",
                             "/dev/null"});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("cerulion: nothing to publish") != std::string::npos);
  CHECK(result.out.find("exit=2") != std::string::npos);
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("PubFromAnEmptyPipePublishesNothingAndSucceeds", "[cli][usage]") {
  const std::string topic = unique_topic("usage_empty_pipe");
  auto result = run_cerulion({"pub", topic, "-v"});
  CHECK(result.exit_code == 0);
  CHECK(result.out.empty());
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}
