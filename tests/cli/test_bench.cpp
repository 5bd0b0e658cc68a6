// SPDX-License-Identifier: Apache-2.0
// `cerulion bench` through the real binary: a short campaign over every available lane with every
// output, the baseline check, and bad input.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

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

  // Against itself the baseline passes; against a run twice as fast it fails.
  auto same = run_cerulion(tiny({"--lanes", "native-single", "--baseline", (dir.path / "run.json").string(),
                                 "--tolerance", "100"}), {}, 120s);
  INFO(same.out << same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("Compared with") != std::string::npos);
  for (auto& cell : j["cells"]) {
    if (cell["status"] == "ok") cell["median_us"] = cell["median_us"].get<double>() / 1000;
  }
  std::ofstream(dir.path / "fast.json") << j.dump();
  auto slower = run_cerulion(tiny({"--lanes", "native-single", "--baseline", (dir.path / "fast.json").string()}), {}, 120s);
  INFO(slower.out << slower.err);
  CHECK(slower.exit_code == 1);
  CHECK(slower.out.find("SLOWER") != std::string::npos);
}

TEST_CASE("bench refuses bad input with one line and exit 2", "[cli][bench][usage]") {
  BenchDir dir;
  std::ofstream(dir.path / "not-bench.json") << "{\"hello\": 1}";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", "--lanes", "ros1"},
           {"bench", "--sizes", "64,lots"},
           {"bench", "--sizes", "4"},
           {"bench", "--runs", "0"},
           {"bench", "--samples", "many"},
           {"bench", "--baseline", (dir.path / "not-bench.json").string()},
           {"bench", "--baseline", (dir.path / "missing.json").string()},
       }) {
    auto r = run_cerulion(args, {}, 30s);
    INFO(args[1] << " " << args[2] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
