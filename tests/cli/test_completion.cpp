// SPDX-License-Identifier: Apache-2.0
// The shipped completion scripts are exactly what the parser generates: they cannot drift.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "everyday_helpers.hpp"
#include "overlapping_mcap.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;


TEST_CASE("Shipped completions match the parser", "[completion]") {
  auto [shell, file] = GENERATE(std::make_pair(std::string("bash"), std::string("cerulion.bash")),
                                std::make_pair(std::string("zsh"), std::string("_cerulion")),
                                std::make_pair(std::string("fish"), std::string("cerulion.fish")));
  auto r = run_cerulion({"completion", shell});
  REQUIRE(r.exit_code == 0);
  INFO("regenerate with: cmake --build build --target completions");
  CHECK(r.out == slurp(std::string(CERULION_SOURCE_DIR) + "/completions/" + file));
}

TEST_CASE("Bash completion script parses", "[completion]") {
  auto r = run_process({"bash", "-n", std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.bash"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("Bash completion offers modes and subcommands", "[completion]") {
  const std::string script = std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.bash";
  auto r = run_process({"bash", "-c",
                        "source '" + script + "'; COMP_WORDS=(cerulion ping --mode ''); COMP_CWORD=3; _cerulion; "
                        "echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cerulion topic ''); COMP_CWORD=2; _cerulion; "
                        "echo \"${COMPREPLY[*]}\""});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("lockstep free-run\n") != std::string::npos);
  CHECK(r.out.find("list info hz") != std::string::npos);
}

namespace {

std::string single_quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// What bash's _cerulion offers for `words` (the cursor on the last one), one reply a line, sorted.
/// `setup` runs first (an `export`, say).
std::vector<std::string> bash_complete(const std::vector<std::string>& words, const std::string& setup = {}) {
  const std::string script = std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.bash";
  std::string array;
  for (const auto& w : words) array += " " + single_quoted(w);
  auto r = run_process({"bash", "-c",
                        setup + "\nsource " + single_quoted(script) + "; COMP_WORDS=(" + array +
                            "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                            "; _cerulion; printf '%s\\n' \"${COMPREPLY[@]}\""});
  REQUIRE(r.exit_code == 0);
  INFO(r.err);
  CHECK(r.err.empty());
  std::vector<std::string> replies;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) replies.push_back(line);
  std::sort(replies.begin(), replies.end());
  return replies;
}

bool offers(const std::vector<std::string>& replies, const std::string& word) {
  return std::find(replies.begin(), replies.end(), word) != replies.end();
}

/// Two live topics, /a and /b, in a domain of their own (publishers repeating until the end).
struct TwoLiveTopics {
  std::string domain = unique_domain("compl");
  BackgroundProcess a{{cerulion_binary(), "--domain", domain, "pub", "/a", "x"}};
  BackgroundProcess b{{cerulion_binary(), "--domain", domain, "pub", "/b", "x"}};
  TwoLiveTopics() {
    REQUIRE(eventually([&] { return count_shm_entries(shm_file("/a", domain)) == 1 &&
                                    count_shm_entries(shm_file("/b", domain)) == 1; },
                       std::chrono::seconds(30)));
  }
};

}  // namespace

TEST_CASE("Bash completion keeps offering topics to commands that take several of them", "[completion]") {
  TwoLiveTopics live;
  const std::string bin = cerulion_binary();
  auto record = bash_complete({bin, "--domain", live.domain, "record", "/a", ""});
  CHECK(offers(record, "/b"));
  CHECK_FALSE(offers(record, "/a"));  // already named
  auto flashback = bash_complete({bin, "flashback", "start", "/b", ""}, "export CERULION_DOMAIN=" + live.domain);
  CHECK(offers(flashback, "/a"));
  CHECK_FALSE(offers(flashback, "/b"));
  // A command about one topic offers topics for it, and no second one.
  CHECK(bash_complete({bin, "--domain", live.domain, "echo", ""}) == std::vector<std::string>{"/a", "/b"});
  auto after_topic = bash_complete({bin, "--domain", live.domain, "echo", "/a", ""});
  CHECK_FALSE(offers(after_topic, "/b"));
  CHECK(offers(after_topic, "--json"));  // its options instead
}

TEST_CASE("Bash completion tells flags from options by the command's own parser", "[completion]") {
  TwoLiveTopics live;
  const std::string bin = cerulion_binary();
  // record's --force is a flag: /a after it is the first topic, and /b comes next.
  auto after_flag = bash_complete({bin, "--domain", live.domain, "record", "--force", "/a", ""});
  CHECK(offers(after_flag, "/b"));
  CHECK_FALSE(offers(after_flag, "/a"));
  CHECK(bash_complete({bin, "--domain", live.domain, "record", "--force", ""}) == std::vector<std::string>{"/a", "/b"});
  // clean's --force takes a topic.
  CHECK(bash_complete({bin, "--domain", live.domain, "clean", "--force", ""}) == std::vector<std::string>{"/a", "/b"});
  // and once it has it, clean takes no positional: its options come next.
  auto after_value = bash_complete({bin, "--domain", live.domain, "clean", "--force", "/a", "--"});
  CHECK(offers(after_value, "--dry-run"));
  // An option's value is not a positional: `record -o run.mcap <TAB>` still offers the first topic.
  CHECK(bash_complete({bin, "--domain", live.domain, "record", "-o", "run.mcap", ""}) ==
        std::vector<std::string>{"/a", "/b"});
}

TEST_CASE("Bash completion offers the shells after completion and command names after help", "[completion]") {
  CHECK(bash_complete({"cerulion", "completion", ""}) == std::vector<std::string>{"bash", "fish", "zsh"});
  auto commands = bash_complete({"cerulion", "help", ""});
  for (const char* name : {"pub", "echo", "topic", "record", "play", "flashback", "help"}) {
    INFO(name);
    CHECK(offers(commands, name));
  }
  CHECK(offers(commands, "completion"));
  CHECK(bash_complete({"cerulion", "help", "topic", ""}) == std::vector<std::string>{"hz", "info", "list"});
  CHECK(bash_complete({"cerulion", "help", "flashback", "d"}) == std::vector<std::string>{"dump"});
  CHECK(offers(bash_complete({"cerulion", ""}), "completion"));
  // `cerulion --help` lists it with the other commands.
  CHECK(run_cerulion({"--help"}).out.find("completion") != std::string::npos);
}

TEST_CASE("Bash completion offers bench's lanes and the domain's flashback keepers", "[completion]") {
  auto lanes = bash_complete({"cerulion", "bench", "--lanes", ""});
  CHECK(offers(lanes, "native-multi"));
  const std::string domain = unique_domain("complete_keepers");
  const std::string store = "/dev/shm/cerulion-flashback." + domain + ".nightly";
  { std::ofstream(store) << ""; }  // a store's name is all the completion reads
  CHECK(bash_complete({"cerulion", "--domain", domain, "flashback", "status", "--name", ""}) ==
        std::vector<std::string>{"nightly"});
  std::filesystem::remove(store);
}

TEST_CASE("Bash completion offers the topics recorded in play's file, whatever its name", "[completion]") {
  TwoLiveTopics live;  // live topics that must not be offered
  const auto dir = std::filesystem::path(record_temp_path("with space"));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "my run.mcap").string();
  REQUIRE(static_cast<bool>(write_overlapping_chunks(file, {"/rec/one", "/rec/two"}, 1, 4, 1000, 10)));
  const std::string bin = cerulion_binary();
  std::string escaped;  // as typed with backslashes: my\ run.mcap
  for (char c : file) escaped += c == ' ' ? std::string("\\ ") : std::string(1, c);
  const std::string setup = "export CERULION_DOMAIN=" + live.domain;
  const std::vector<std::string> both{"/rec/one", "/rec/two"};
  CHECK(bash_complete({bin, "play", escaped, "--topics", ""}, setup) == both);
  CHECK(bash_complete({bin, "play", "'" + file + "'", "--topics", ""}, setup) == both);
  CHECK(bash_complete({bin, "play", "\"" + file + "\"", "-r", "2", "--topics", "/rec/t"}, setup) ==
        std::vector<std::string>{"/rec/two"});
  // --topics takes several: the next word is another topic of the file.
  CHECK(bash_complete({bin, "play", escaped, "--topics", "/rec/one", ""}, setup) == std::vector<std::string>{"/rec/two"});
  // Through the cerulion-play link, too.
  const std::string link = bin.substr(0, bin.rfind('/') + 1) + "cerulion-play";
  CHECK(bash_complete({link, escaped, "--topics", ""}, setup) == both);
  // A file that is not there offers nothing (and says nothing).
  CHECK(bash_complete({bin, "play", "/nonexistent/x.mcap", "--topics", ""}, setup).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("The commands that read a recording complete MCAP files and directories rather than any file", "[completion]") {
  const auto dir = std::filesystem::path(record_temp_path("mcap files"));
  std::filesystem::create_directories(dir / "sub");
  spit((dir / "run.mcap").string(), "");
  spit((dir / "notes.txt").string(), "");
  const std::string prefix = dir.string() + "/";
  const std::vector<std::string> recordings{prefix + "run.mcap", prefix + "sub"};
  for (const char* command : {"info", "play", "recover"}) {
    INFO(command);
    CHECK(bash_complete({"cerulion", command, prefix}) == recordings);
  }
  // What a command writes may be any file: recover's -o is not limited to *.mcap.
  CHECK(offers(bash_complete({"cerulion", "recover", "x.mcap", "-o", prefix}), prefix + "notes.txt"));
  std::filesystem::remove_all(dir);

  // zsh and fish, as generated (neither shell need be installed to read what they are told).
  const std::string zsh = slurp(std::string(CERULION_SOURCE_DIR) + "/completions/_cerulion");
  const std::string fish = slurp(std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.fish");
  for (const std::string command : {"info", "play", "recover"}) {
    INFO(command);
    const auto at = zsh.find("_cerulion_cmd" + command + "() {");
    REQUIRE(at != std::string::npos);
    const std::string function = zsh.substr(at, zsh.find("\n}\n", at) - at);
    CHECK(function.find("'1:file:_files -g \"*.mcap\"'") != std::string::npos);
    const std::string condition = "complete -c cerulion -n '__fish_seen_subcommand_from " + command + "'";
    CHECK(fish.find(condition + " -a '(__fish_complete_suffix .mcap)'\n") != std::string::npos);
    CHECK(fish.find(condition + " -F\n") == std::string::npos);
  }
}
