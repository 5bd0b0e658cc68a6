// SPDX-License-Identifier: Apache-2.0
// A mistyped command, subcommand or option is refused with one line that names it and the nearest
// known word, and a bare word near a subcommand's name is never taken for a topic to bridge.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "process.hpp"

using namespace cerulion::test;

namespace {

void check_refused(const std::vector<std::string>& args, const std::string& line) {
  std::string typed;
  for (const auto& a : args) typed += a + " ";
  INFO("cerulion " << typed);
  // The bridge of `bridge stat` ran until killed: a short timeout tells a refusal from a start.
  auto result = run_cerulion(args, {}, std::chrono::seconds(20));
  CHECK_FALSE(result.timed_out);
  CHECK(result.exit_code == 2);
  CHECK(result.out.empty());
  CHECK(result.err == line + "\n");
}

}  // namespace

TEST_CASE("A mistyped global option is named with the nearest one, not taken for a command", "[cli][usage][typos]") {
  check_refused({"--domian", "x", "topic", "list"},
                "cerulion: unknown option '--domian': did you mean '--domain'? (see 'cerulion --help')");
  check_refused({"--verison"}, "cerulion: unknown option '--verison': did you mean '--version'? (see 'cerulion --help')");
  check_refused({"--domian=x", "topic", "list"},
                "cerulion: unknown option '--domian': did you mean '--domain'? (see 'cerulion --help')");
}

TEST_CASE("A mistyped command or subcommand is refused with the nearest one", "[cli][usage][typos]") {
  check_refused({"recrod", "/x"}, "cerulion: unknown command 'recrod': did you mean 'record'? (see 'cerulion --help')");
  check_refused({"--domain", "x", "topic", "lsit"},
                "cerulion: unknown topic command 'lsit': did you mean 'list'? (see 'cerulion topic --help')");
  check_refused({"flashback", "stauts"},
                "cerulion: unknown flashback command 'stauts': did you mean 'status'? (see 'cerulion flashback --help')");
  check_refused({"help", "topic", "hzz"}, "cerulion: no topic command 'hzz': did you mean 'hz'? (see 'cerulion topic --help')");
}

TEST_CASE("A mistyped option of a command is named with the nearest one, before anything else it lacks",
          "[cli][usage][typos]") {
  check_refused({"topic", "list", "--jsn"},
                "cerulion: unknown option '--jsn': did you mean '--json'? (see 'cerulion topic list --help')");
  // The topic is missing too; the option is the likelier mistake.
  check_refused({"echo", "--jsno"}, "cerulion: unknown option '--jsno': did you mean '--json'? (see 'cerulion echo --help')");
  check_refused({"echo", "/x", "--cuont", "3"},
                "cerulion: unknown option '--cuont': did you mean '--count'? (see 'cerulion echo --help')");
  check_refused({"bridge", "--depht", "5", "/x"},
                "cerulion: unknown option '--depht': did you mean '--depth'? (see 'cerulion bridge --help')");
}

TEST_CASE("A word far from every known one is refused without a guess", "[cli][usage][typos]") {
  check_refused({"--frobnicate"}, "cerulion: unknown option '--frobnicate' (see 'cerulion --help')");
  check_refused({"topic", "frobnicate"}, "cerulion: unknown topic command 'frobnicate' (see 'cerulion topic --help')");
  check_refused({"pub", "/x", "hi", "-Q"}, "cerulion: unknown option '-Q' (see 'cerulion pub --help')");
}

TEST_CASE("Bridge refuses a bare word near a subcommand's name instead of bridging a topic of it", "[cli][usage][typos]") {
  for (const char* word : {"stat", "stats", "statsu", "Status"}) {
    check_refused({"bridge", word}, std::string("cerulion: unknown bridge command '") + word +
                                        "': did you mean 'status'? (a topic of that name is written '/" + word + "')");
  }
}
