// SPDX-License-Identifier: Apache-2.0
// `cerulion bench` through the real binary: a short campaign over every available lane with every
// output, the baseline check, bad input, and a campaign killed or stopped mid-run.

#include <catch2/catch.hpp>

#include <csignal>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct BenchDir {
  fs::path path = fs::temp_directory_path() / unique_domain("bench");
  BenchDir() { fs::create_directories(path); }
  ~BenchDir() { fs::remove_all(path); }
};

// A campaign short enough for a test: one size, one repetition of 20 round trips at 200 Hz.
std::vector<std::string> tiny(std::vector<std::string> extra) {
  std::vector<std::string> args{"--domain", unique_domain("bench"), "bench", "--sizes", "64", "--runs", "1",
                                "--samples", "20", "--warmup", "5", "--rate", "200"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// The processes descending from this one (its children, theirs...), by pid.
std::vector<pid_t> descendants() {
  std::map<pid_t, std::vector<pid_t>> children;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      const std::string name = e->d_name;
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat("/proc/" + name + "/stat");
      std::string line;
      std::getline(stat, line);
      // Fields after the parenthesised command: state, then the parent's pid.
      const auto close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 2));
      char state = 0;
      pid_t parent = 0;
      rest >> state >> parent;
      if (state != 'Z') children[parent].push_back(static_cast<pid_t>(std::stol(name)));
    }
    ::closedir(proc);
  }
  std::vector<pid_t> out, todo{::getpid()};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

/// /dev/shm entries whose name holds `text`.
std::vector<std::string> shm_entries_with(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (name.find(text) != std::string::npos) out.push_back(name);
  }
  return out;
}

/// While it lives, this process adopts the orphans of its descendants (a subreaper), so that a
/// process left behind by a killed campaign is still found among them.
struct AdoptOrphans {
  AdoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~AdoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  /// Reaps the orphans that ended (they were never this process's to wait for otherwise).
  static void reap() {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
};

}  // namespace

TEST_CASE("A short bench campaign measures every available lane and writes every output", "[cli][bench]") {
  BenchDir dir;
  auto r = run_cerulion(tiny({"--json", (dir.path / "run.json").string(), "--markdown", (dir.path / "run.md").string(),
                              "--html", (dir.path / "run.html").string(), "--samples-dir", (dir.path / "raw").string()}),
                        {}, 300s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Round trip at 64 B") != std::string::npos);
  CHECK(r.out.find("All measured values") != std::string::npos);
  auto j = json::parse(read_file(dir.path / "run.json"));
  CHECK(j["format"] == "cerulion-bench/1");
  CHECK(j.contains("machine"));
  CHECK(j.contains("settings"));
  std::size_t measured = 0;
  for (const auto& cell : j["cells"]) {
    INFO(cell.dump());
    CHECK((cell["status"] == "ok" || cell["status"] == "unavailable"));
    if (cell["status"] != "ok") continue;
    ++measured;
    CHECK(cell["samples"] == 20);
    CHECK(cell["median_us"].get<double>() > 0);
    CHECK(fs::file_size(dir.path / "raw" / (cell["lane"].get<std::string>() + "_64B_rep1.u64le")) == 20 * 8);
  }
  CHECK(measured >= 3);  // the native lanes at least
  const auto md = read_file(dir.path / "run.md");
  const auto html = read_file(dir.path / "run.html");
  for (const auto& cell : j["cells"]) {
    CHECK(md.find(cell["lane"].get<std::string>()) != std::string::npos);
    CHECK(html.find(cell["lane"].get<std::string>()) != std::string::npos);
  }
  CHECK(html.find("<svg") != std::string::npos);

  // The plan before anything runs, the machine's load, then progress counted in cells.
  CHECK(r.err.find("round trips at 200 Hz, plus start-up: about") != std::string::npos);
  CHECK(r.err.find("bench: machine: load average") != std::string::npos);
  CHECK(r.err.find("bench: cell 1/") != std::string::npos);
  CHECK(j["machine"]["load"]["checked"] == true);
  CHECK(j["machine"]["load"]["floor"]["samples"] == 300);

  // The saved JSON renders the same reports again, without measuring.
  auto again = run_cerulion({"bench", "--from", (dir.path / "run.json").string(), "--html",
                             (dir.path / "again.html").string(), "--md", (dir.path / "again.md").string()},
                            {}, 30s);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out == r.out);
  CHECK(read_file(dir.path / "again.html") == html);
  CHECK(read_file(dir.path / "again.md") == md);

  // Against itself the baseline passes.
  auto same = run_cerulion({"bench", "--from", (dir.path / "run.json").string(), "--baseline",
                            (dir.path / "run.json").string()}, {}, 30s);
  INFO(same.out << same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("Compared with") != std::string::npos);

  // A cerulion cell that fails now, or kept only a lower rate than the baseline's, fails the check.
  auto changed = [&](const char* name, auto change) {
    json now = j;
    for (auto& cell : now["cells"]) {
      if (cell["lane"] == "native-single") change(cell);
    }
    std::ofstream(dir.path / name) << now.dump();
    return run_cerulion({"bench", "--from", (dir.path / name).string(), "--baseline", (dir.path / "run.json").string()},
                        {}, 30s);
  };
  auto fails = changed("fails.json", [](json& cell) {
    cell["status"] = "failed";
    cell["reason"] = "skipped 30 of 80 slots at 20 Hz (over 1 %)";
  });
  INFO(fails.out << fails.err);
  CHECK(fails.exit_code == 1);
  CHECK(fails.out.find("FAILS") != std::string::npos);
  CHECK(fails.err.find("1 cerulion cell failing") != std::string::npos);
  auto fell_back = changed("fell-back.json", [](json& cell) {
    cell["rate_hz"] = cell["rate_hz"].get<double>() / 4;
    cell["fell_back"] = true;
  });
  INFO(fell_back.out << fell_back.err);
  CHECK(fell_back.exit_code == 1);
  CHECK(fell_back.out.find("FELL BACK") != std::string::npos);

  // A campaign measured against a run a thousand times as fast, at the planned rate, fails. (The
  // run above may have fallen back on a busy machine; a baseline at a lower rate than today's is
  // not compared, so the baseline claims the planned rate.)
  for (auto& cell : j["cells"]) {
    if (cell["status"] != "ok") continue;
    cell["median_us"] = cell["median_us"].get<double>() / 1000;
    cell["rate_hz"] = j["settings"]["rate_hz"];
    cell["fell_back"] = false;
  }
  std::ofstream(dir.path / "fast.json") << j.dump();
  auto slower = run_cerulion(tiny({"--lanes", "native-single", "--baseline", (dir.path / "fast.json").string()}), {}, 120s);
  INFO(slower.out << slower.err);
  CHECK(slower.exit_code == 1);
  // SLOWER at the same rate; on a busy machine the cell may have had to fall back, which fails too.
  CHECK((slower.out.find("SLOWER") != std::string::npos || slower.out.find("FELL BACK") != std::string::npos));
}

TEST_CASE("bench refuses bad input with one line and exit 2", "[cli][bench][usage]") {
  BenchDir dir;
  std::ofstream(dir.path / "not-bench.json") << "{\"hello\": 1}";
  REQUIRE(::mkfifo((dir.path / "fifo.json").c_str(), 0600) == 0);  // would block a reader for ever
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", "--lanes", "ros1"},
           {"bench", "--sizes", "64,lots"},
           {"bench", "--sizes", "4"},
           {"bench", "--runs", "0"},
           {"bench", "--samples", "many"},
           {"bench", "--baseline", (dir.path / "not-bench.json").string()},
           {"bench", "--baseline", (dir.path / "missing.json").string()},
           {"bench", "--from", (dir.path / "not-bench.json").string()},
           {"bench", "--from", (dir.path / "missing.json").string()},
           {"bench", "--from", (dir.path / "not-bench.json").string(), "--lanes", "native-multi"},
           {"bench", "--from", dir.path.string()},
           {"bench", "--from", (dir.path / "fifo.json").string()},
           {"bench", "--baseline", (dir.path / "fifo.json").string()},
       }) {
    auto r = run_cerulion(args, {}, 30s);
    INFO(args[1] << " " << args[2] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("A bench killed with SIGKILL or stopped with Ctrl-C leaves no process and nothing in /dev/shm",
          "[cli][bench]") {
  int sig = SIGKILL;
  SECTION("kill -9") {}
  SECTION("Ctrl-C") { sig = SIGINT; }
  AdoptOrphans adopt;
  const std::string domain = unique_domain("benchkill");
  REQUIRE(shm_entries_with(domain).empty());
  // The native lanes (flashback keepers on, as by default): long enough to be killed mid-run.
  BackgroundProcess bench({cerulion_binary(), "--domain", domain, "bench", "--lanes", "native-multi,native-single",
                           "--sizes", "64", "--runs", "3", "--samples", "100000", "--warmup", "5", "--rate", "1000"});
  // A ping measuring, with its pong and its keeper, all with topics and a store of this domain.
  const bool measuring = eventually(
      [&] {
        return descendants().size() >= 4 && !shm_entries_with("cerulion-flashback." + domain + ".ping-").empty();
      },
      120s);
  REQUIRE(measuring);
  bench.signal(sig);
  const ProcessResult r = bench.wait(120s);
  INFO(r.out << r.err);
  REQUIRE_FALSE(r.timed_out);
  if (sig == SIGKILL) {
    CHECK(r.killed_by == SIGKILL);
  } else {
    // Stopped, with the tables of what it finished (here nothing) and a line saying so.
    CHECK(r.exit_code == 130);
    CHECK(r.out.find("All measured values") != std::string::npos);
    CHECK(r.err.find("interrupted") != std::string::npos);
  }
  const bool no_process = eventually(
      [&] {
        AdoptOrphans::reap();
        return descendants().empty();
      },
      60s);
  const bool no_shm = eventually([&] { return shm_entries_with(domain).empty(); }, 30s);
  std::string left;
  for (pid_t p : descendants()) left += " pid " + std::to_string(p);
  for (const auto& name : shm_entries_with(domain)) left += " /dev/shm/" + name;
  INFO("left behind:" << left);
  CHECK(no_process);
  CHECK(no_shm);
}

TEST_CASE("Ctrl-C of a bench whose --json is a FIFO nobody reads exits 130 at once, saying the JSON was not written",
          "[cli][bench]") {
  BenchDir dir;
  const fs::path fifo = dir.path / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string domain = unique_domain("benchfifo");
  BackgroundProcess bench({cerulion_binary(), "--domain", domain, "bench", "--lanes", "native-single", "--sizes", "64",
                           "--runs", "1", "--samples", "100000", "--warmup", "5", "--rate", "1000", "--json",
                           fifo.string()});
  REQUIRE(eventually([&] { return descendants().size() >= 2; }, 120s));  // measuring: a ping and its pong
  bench.signal(SIGINT);
  // One Ctrl-C: before, it waited in the FIFO's open for a reader until a second one.
  const ProcessResult r = bench.wait(60s);
  INFO(r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("cerulion: warning: the JSON was not written to '" + fifo.string() + "': nobody reads that FIFO") !=
        std::string::npos);
}
