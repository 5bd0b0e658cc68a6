// SPDX-License-Identifier: Apache-2.0
// Fast DDS and iceoryx are plugins (plugin/include/cerulion/plugin/plugin.hpp): a plain command
// does not load them, nor OpenSSL and SQLite that Fast DDS brings, and a command that needs a
// missing plugin says so in one line.

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <regex>
#include <sys/stat.h>

#include "everyday_helpers.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

// The shared objects of a plugin's libraries that process `pid` has mapped, one per line.
std::string heavy_libraries_mapped(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const std::regex heavy(R"(/lib(fastrtps|fastcdr|iceoryx\w*|ssl|crypto|sqlite3)\.so[^/]*$)");
  std::string line, found;
  while (std::getline(maps, line)) {
    if (std::regex_search(line, heavy) && found.find(line.substr(line.rfind('/'))) == std::string::npos) {
      found += line.substr(line.rfind('/')) + "\n";
    }
  }
  return found;
}

// `cerulion <args>` with `variable` set in its environment.
std::vector<std::string> with_environment(const std::string& variable, std::vector<std::string> args) {
  std::vector<std::string> argv{"env", variable, cerulion_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

TEST_CASE("A running echo and pub map no Fast DDS, iceoryx, OpenSSL or SQLite, which a bridge does", "[cli][plugins]") {
  const auto topic = unique_topic("plugins_plain");
  BackgroundProcess echo({cerulion_binary(), "echo", topic});
  BackgroundProcess pub({cerulion_binary(), "pub", topic, "x", "-r", "20"});
  REQUIRE(eventually([&] {
    const auto snapshot = topic_snapshot(topic);
    return live_readers(snapshot, "subscriber") == 1 && live_readers(snapshot, "publisher") == 1;
  }));
  CHECK(heavy_libraries_mapped(echo.pid()) == "");
  CHECK(heavy_libraries_mapped(pub.pid()) == "");

  // The same reading finds Fast DDS in a bridge, so the checks above can fail.
  BackgroundProcess bridge({cerulion_binary(), "bridge", unique_topic("plugins_bridge"), "--export",
                            "--no-shared-memory", "--dds-domain", "231"});
  const bool mapped = eventually([&] { return !bridge.running() || !heavy_libraries_mapped(bridge.pid()).empty(); });
  if (!bridge.running()) {
    const auto done = bridge.wait();
    INFO(done.err);
    REQUIRE(done.err.find("without Fast DDS") != std::string::npos);  // a build without the bridge
    return;
  }
  CHECK(mapped);
  CHECK(heavy_libraries_mapped(bridge.pid()).find("/libfastrtps") != std::string::npos);
}

TEST_CASE("A missing plugin is one line and a non-zero exit, for the bridge and for ping's peer transports", "[cli][plugins]") {
  ProcessTempDir empty;
  const std::string variable = "CERULION_PLUGIN_DIR=" + empty.path().string();
  auto bridge = run_process(with_environment(variable, {"bridge", unique_topic("plugins_missing"), "--duration", "1"}));
  INFO(bridge.err);
  CHECK(bridge.exit_code == 1);
  CHECK(bridge.killed_by == 0);
  CHECK(text_lines(bridge.err).size() == 1);
  const bool built_without = bridge.err.find("without Fast DDS") != std::string::npos;
  CHECK((built_without || bridge.err.find(empty.path().string() + "/bridge.so") != std::string::npos));

  for (const char* transport : {"fastdds", "iceoryx"}) {
    INFO(transport);
    auto ping = run_process(with_environment(variable, {"ping", "--transport", transport, "-c", "1"}));
    INFO(ping.err);
    CHECK(ping.exit_code == 2);
    CHECK(ping.killed_by == 0);
    CHECK(text_lines(ping.err).size() == 1);
    CHECK(ping.err.find(transport) != std::string::npos);
  }
}

TEST_CASE("A plugin that is not a shared object is refused in one line, never a crash or a hang", "[cli][plugins]") {
  ProcessTempDir dir;
  SECTION("a text file") { std::ofstream(dir.path() / "bridge.so") << "not an ELF file\n"; }
  SECTION("a FIFO, which dlopen would wait on") { REQUIRE(::mkfifo((dir.path() / "bridge.so").c_str(), 0600) == 0); }
  auto bridge = run_process(with_environment("CERULION_PLUGIN_DIR=" + dir.path().string(),
                                             {"bridge", unique_topic("plugins_bad"), "--duration", "1"}));
  INFO(bridge.err);
  CHECK_FALSE(bridge.timed_out);
  CHECK(bridge.exit_code == 1);
  CHECK(bridge.killed_by == 0);
  CHECK(text_lines(bridge.err).size() == 1);
}
