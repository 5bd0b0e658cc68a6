// SPDX-License-Identifier: Apache-2.0
// The documentation says the same things everywhere: every man page and every command's --help
// shows examples, and every man page carries the same date and the program's version. What a user
// reads stands alone (nothing points outside the repository, every docs/ page named exists, --json
// has one convention), and the umbrella header and the README's layout leave nothing out.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"
#include "temp_dir.hpp"

using namespace cerulion::test;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> man_pages() {
  std::vector<std::filesystem::path> pages;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CERULION_SOURCE_DIR) + "/man")) {
    if (entry.path().extension() == ".1") pages.push_back(entry.path());
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

// The subcommands a --help lists (CLI11: a "SUBCOMMANDS:" heading, then "  name  description").
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    if (line.rfind("SUBCOMMANDS:", 0) == 0 || line.rfind("Subcommands:", 0) == 0) {
      listing = true;
    } else if (listing) {
      if (line.empty() || line[0] != ' ') break;
      std::istringstream words(line);
      std::string name;
      words >> name;
      if (!name.empty()) names.push_back(name);
    }
  }
  return names;
}

// Every command path, `cerulion --help` down: {"pub"}, {"topic", "list"}...
void command_paths(const std::vector<std::string>& path, std::vector<std::vector<std::string>>& out) {
  std::vector<std::string> args = path;
  args.emplace_back("--help");
  auto r = run_cerulion(args);
  REQUIRE(r.exit_code == 0);
  for (const auto& name : subcommands_in(r.out)) {
    auto child = path;
    child.push_back(name);
    out.push_back(child);
    command_paths(child, out);
  }
}

}  // namespace

TEST_CASE("Every man page has an EXAMPLES section", "[docs]") {
  const auto pages = man_pages();
  REQUIRE(pages.size() >= 13);
  for (const auto& page : pages) {
    INFO(page.filename().string());
    const std::string text = read_text(page);
    const auto at = text.find("\n.SH EXAMPLES\n");
    REQUIRE(at != std::string::npos);
    // with at least two example lines before the next section
    const auto end = text.find("\n.SH ", at + 1);
    const std::string section = text.substr(at, end - at);
    CHECK(std::count(section.begin(), section.end(), '\n') >= 4);
  }
}

TEST_CASE("Every man page carries the same date and the program's version", "[docs]") {
  auto version = run_cerulion({"--version"});
  REQUIRE(version.exit_code == 0);
  std::string v = version.out.substr(0, version.out.find('\n'));  // "cerulion 0.1.0"
  std::string th_date;
  for (const auto& page : man_pages()) {
    INFO(page.filename().string());
    const std::string text = read_text(page);
    const std::string th = text.substr(0, text.find('\n'));
    REQUIRE(th.rfind(".TH ", 0) == 0);
    CHECK(th.find("\"" + v + "\"") != std::string::npos);
    const auto q1 = th.find('"');
    const std::string date = th.substr(q1, th.find('"', q1 + 1) - q1 + 1);
    if (th_date.empty()) th_date = date;
    CHECK(date == th_date);
  }
}

TEST_CASE("Every command's help ends with examples", "[docs]") {
  std::vector<std::vector<std::string>> paths;
  command_paths({}, paths);
  REQUIRE(paths.size() >= 19);  // 13 commands, topic's 3, flashback's 4
  for (const auto& path : paths) {
    std::string name;
    for (const auto& word : path) name += " " + word;
    INFO("cerulion" + name + " --help");
    auto args = path;
    args.emplace_back("--help");
    auto r = run_cerulion(args);
    REQUIRE(r.exit_code == 0);
    const auto at = r.out.rfind("Examples:");
    REQUIRE(at != std::string::npos);
    CHECK(r.out.find("cerulion ", at) != std::string::npos);  // an example follows it
  }
}

TEST_CASE("Every command has a man page", "[docs]") {
  std::vector<std::vector<std::string>> paths;
  command_paths({}, paths);
  for (const auto& path : paths) {
    if (path.size() != 1 || path[0] == "help") continue;  // help is in cerulion(1)
    INFO(path[0]);
    CHECK(std::filesystem::exists(std::string(CERULION_SOURCE_DIR) + "/man/cerulion-" + path[0] + ".1"));
  }
}

namespace {

std::string source(const std::string& relative) { return std::string(CERULION_SOURCE_DIR) + "/" + relative; }

// What a user of a clone or of an install reads: the README, the man pages, docs/, the installed
// headers and the scripts.
std::vector<std::filesystem::path> user_facing_files() {
  std::vector<std::filesystem::path> files = {source("README.md")};
  for (const auto& page : man_pages()) files.push_back(page);
  for (const char* dir : {"docs", "scripts", "core/include", "recorder/include", "recording/include",
                          "flashback/include", "bridge/include", "measurement/include", "bench/include"}) {
    if (!std::filesystem::exists(source(dir))) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source(dir))) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  return files;
}

}  // namespace

TEST_CASE("No user-facing file refers to the shared folder outside the repository", "[docs]") {
  for (const auto& file : user_facing_files()) {
    INFO(file.string());
    const std::string text = read_text(file);
    CHECK(text.find("../shared") == std::string::npos);
    CHECK(text.find("shared/reference") == std::string::npos);
    CHECK(text.find("shared/tools") == std::string::npos);
  }
}

TEST_CASE("Every docs/ page that the README or a man page names exists", "[docs]") {
  std::vector<std::filesystem::path> files = {source("README.md")};
  for (const auto& page : man_pages()) files.push_back(page);
  for (const auto& entry : std::filesystem::directory_iterator(source("docs"))) files.push_back(entry.path());
  const std::regex named(R"(docs/([a-z0-9-]+\.md))");
  std::size_t seen = 0;
  for (const auto& file : files) {
    const std::string text = read_text(file);
    for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it, ++seen) {
      INFO(file.filename().string() << " names " << it->str());
      CHECK(std::filesystem::exists(source("docs/" + (*it)[1].str())));
    }
  }
  CHECK(seen >= 3);  // the README names the benchmark method, the figures and the JSON convention
}

TEST_CASE("Every man page that offers --json points to the one JSON convention", "[docs]") {
  for (const auto& page : man_pages()) {
    const std::string text = read_text(page);
    if (text.find("\\-\\-json\n") == std::string::npos && text.find("\\-\\-json ") == std::string::npos) continue;
    INFO(page.filename().string());
    CHECK(text.find("docs/json.md") != std::string::npos);
  }
}

TEST_CASE("cerulion/core.hpp includes every public core header", "[docs]") {
  const std::string umbrella = read_text(source("core/include/cerulion/core.hpp"));
  std::size_t headers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source("core/include/cerulion/core"))) {
    if (entry.path().extension() != ".hpp") continue;
    ++headers;
    INFO(entry.path().filename().string());
    CHECK(umbrella.find("#include \"cerulion/core/" + entry.path().filename().string() + "\"") != std::string::npos);
  }
  CHECK(headers >= 10);
}

TEST_CASE("The README's layout lists every library", "[docs]") {
  const std::string readme = read_text(source("README.md"));
  const auto at = readme.find("\n## Layout\n");
  REQUIRE(at != std::string::npos);
  const std::string layout = readme.substr(at, readme.find("\n## ", at + 1) - at);
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CERULION_SOURCE_DIR))) {
    const auto cmake = entry.path() / "CMakeLists.txt";
    if (!entry.is_directory() || !std::filesystem::exists(cmake)) continue;
    if (read_text(cmake).find("add_library(") == std::string::npos) continue;
    INFO(entry.path().filename().string());
    CHECK(layout.find("`" + entry.path().filename().string() + "/`") != std::string::npos);
  }
}

TEST_CASE("Every man page renders with groff without a warning", "[docs]") {
  // man(1) runs tbl and groff at the terminal's width; a warning there ("table wider than line
  // width") is what a reader meets as a mangled page.
  if (run_process({"sh", "-c", "command -v groff"}).exit_code != 0) {
    WARN("skipped: groff is not installed (Debian: groff-base)");
    return;
  }
  for (const auto& page : man_pages()) {
    INFO(page.filename().string());
    auto r = run_process({"groff", "-t", "-man", "-Tutf8", "-ww", "-z", page.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.err == "");  // compared with "", so that a failure shows the warning
  }
}

TEST_CASE("cerulion(1) names every environment variable the program reads", "[docs]") {
  const std::string page = read_text(source("man/cerulion.1"));
  const auto at = page.find("\n.SH ENVIRONMENT\n");
  REQUIRE(at != std::string::npos);
  const std::string environment = page.substr(at, page.find("\n.SH ", at + 1) - at);
  const std::regex read(R"re(getenv\("(CERULION_[A-Z_]+)"\))re");
  std::size_t seen = 0;
  for (const char* dir : {"cli", "core", "recorder", "recording", "flashback", "bridge", "measurement", "bench", "plugin"}) {
    if (!std::filesystem::exists(source(dir))) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source(dir))) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      const std::string text = read_text(entry.path());
      for (std::sregex_iterator it(text.begin(), text.end(), read), end; it != end; ++it, ++seen) {
        INFO(entry.path().filename().string() << " reads " << (*it)[1].str());
        CHECK(environment.find("\n.B " + (*it)[1].str() + "\n") != std::string::npos);
      }
    }
  }
  CHECK(seen >= 2);  // CERULION_DOMAIN and CERULION_FLASHBACK_DIR
}

TEST_CASE("Every C++ snippet of the README says how it compiles", "[docs]") {
  // scripts/examples.sh compiles them against the installed package; this catches a snippet
  // without its comment (or with a word the generator does not know) before it gets that far.
  const std::string out = fresh_temp_path("readme-snippets");
  auto r = run_process({"sh", source("scripts/readme-snippets.sh"), source("README.md"), out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string list = read_text(std::filesystem::path(out) / "snippets.list");
  CHECK(std::count(list.begin(), list.end(), '\n') >= 4);  // core, core continued, flashback, bridge
  std::filesystem::remove_all(out);
}
