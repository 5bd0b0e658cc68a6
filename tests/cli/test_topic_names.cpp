// SPDX-License-Identifier: Apache-2.0
// Bad topic and domain names on the command line: one usage line that names the name once, with
// every byte that is not printable ASCII in hex, and nothing created.

#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;

namespace {

std::string allowed_topic_characters() { return "is not allowed (use A-Z a-z 0-9 _ . - and /)"; }

}  // namespace

TEST_CASE("A bad byte in a topic name is shown once, in hex", "[cli][usage]") {
  const std::string output = "/tmp/cerulion-bad-name-" + std::to_string(::getpid()) + ".mcap";
  struct Mistake {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Mistake> mistakes = {
      {{"pub", "/caf\xc3\xa9", "x", "--once"},
       "cerulion: invalid topic name '/caf\\xc3\\xa9': character '\\xc3\\xa9' " + allowed_topic_characters() + "\n"},
      {{"echo", "/a\x7f" "b", "--timeout", "1"},
       "cerulion: invalid topic name '/a\\x7fb': character '\\x7f' " + allowed_topic_characters() + "\n"},
      {{"record", "/a\tb", "-o", output},
       "cerulion: invalid topic name '/a\\x09b': character '\\x09' " + allowed_topic_characters() + "\n"},
  };
  for (const auto& mistake : mistakes) {
    INFO("cerulion " << mistake.args[0] << " " << mistake.args[1]);
    auto result = run_cerulion(mistake.args);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err == mistake.err);
  }
  CHECK(::access(output.c_str(), F_OK) != 0);
}

TEST_CASE("A bad byte in a domain name is shown in hex", "[cli][usage]") {
  auto result = run_cerulion({"--domain", "d\tx", "pub", "/a", "x", "--once"});
  CHECK(result.exit_code == 2);
  CHECK(result.err.rfind("cerulion: --domain: invalid domain 'd\\x09x': character '\\x09' is not allowed", 0) == 0);
  CHECK(result.err.find('\t') == std::string::npos);
}

TEST_CASE("A domain and a topic too long together are refused up front, naming both lengths and the limit",
          "[cli][pub][usage]") {
  std::string domain = unique_domain("long");
  domain += std::string(64 - domain.size(), 'd');
  const std::string topic = "/" + std::string(199, 't');
  for (const char* command : {"pub", "echo"}) {
    INFO("cerulion " << command);
    std::vector<std::string> args{"--domain", domain, command, topic};
    if (std::string(command) == "pub") args.insert(args.end(), {"x", "--once"});
    auto result = run_cerulion(args);
    CHECK(result.exit_code == 2);
    CHECK(result.err == "cerulion: topic '" + topic + "' (200 characters) and domain '" + domain +
                            "' (64 characters) are too long together: their shared-memory file name would be "
                            "273 bytes, over the limit of 255 (topic and domain may have 246 characters together)\n");
  }
  CHECK(count_shm_entries("cerulion." + domain) == 0);

  // The longest topic that fits beside this domain works.
  const std::string fitting = "/" + std::string(246 - 64 - 1, 't');
  auto published = run_cerulion({"--domain", domain, "pub", fitting, "x", "--once"});
  CHECK(published.exit_code == 0);
  CHECK(published.err.empty());
}
