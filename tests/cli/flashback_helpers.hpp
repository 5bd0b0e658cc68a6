// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the `cerulion flashback` end-to-end tests (test_flashback_*.cpp): a domain and dump
// directory of a test's own with its keepers, and dumps read back message by message.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cerulion/recorder/reader.hpp"
#include "everyday_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

namespace cerulion::test {

using namespace std::chrono_literals;

/// The rate of the tests that count every message a keeper's tap took. A tap reads behind its
/// publisher and misses what the ring (16 deep by default) overwrites first; at 50 Hz that takes a
/// keeper off the CPU for 320 ms, which a loaded 2-core machine stays under.
inline const std::string kTapSafeRate = "50";

/// A domain and a dump directory of the test's own. At the end its keepers are stopped, its stores
/// removed, and every /dev/shm file of the domain (stores, topic segments) unlinked.
class FlashbackDomain {
 public:
  explicit FlashbackDomain(const std::string& stem) : name(unique_domain(stem)), dir(record_temp_path(stem)) {
    std::filesystem::create_directories(dir);
  }
  FlashbackDomain(const FlashbackDomain&) = delete;
  FlashbackDomain& operator=(const FlashbackDomain&) = delete;
  ~FlashbackDomain() {
    for (const auto& keeper : keepers_) {
      run_cerulion(with({"flashback", "stop", "--discard", "--name", keeper}), {}, 20s);
    }
    const std::string segment = shm_file("/x", name);  // "cerulion.<domain>:x"
    const std::string prefixes[] = {"cerulion-flashback." + name + ".", segment.substr(0, segment.size() - 1)};
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/dev/shm", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      for (const auto& prefix : prefixes) {
        if (file.rfind(prefix, 0) == 0) std::filesystem::remove(it->path(), ec);
      }
    }
    std::filesystem::remove_all(dir, ec);  // the per-process temp folder itself goes when the process ends
  }

  /// `--domain D args...`.
  std::vector<std::string> with(std::vector<std::string> args) const { return in_domain(name, std::move(args)); }
  /// The whole command line of `cerulion --domain D args...`.
  std::vector<std::string> command(std::vector<std::string> args) const {
    args = with(std::move(args));
    args.insert(args.begin(), cerulion_binary());
    return args;
  }
  ProcessResult run(std::vector<std::string> args, const std::string& input = {}) const {
    return run_cerulion(with(std::move(args)), input, 30s);
  }

  /// `flashback start ARGS --name NAME --dir DIR` (and `--memory 16MiB` unless ARGS say) in the
  /// background, once its store says it is alive. At normal priority unless told to leave it to
  /// the keeper: its default, idle, gives the keeper only CPU time nobody else wants, and what
  /// these tests count must not depend on a machine otherwise idle.
  std::unique_ptr<BackgroundProcess> start_keeper(std::vector<std::string> args, const std::string& keeper = "default",
                                                  bool normal_priority = true, const std::string& stderr_redirection = {}) {
    if (std::find(keepers_.begin(), keepers_.end(), keeper) == keepers_.end()) keepers_.push_back(keeper);
    if (normal_priority) args.insert(args.end(), {"--priority", "normal"});
    const bool memory = std::find(args.begin(), args.end(), "--memory") != args.end();
    args.insert(args.begin(), {"flashback", "start"});
    for (const char* a : {"--name", keeper.c_str(), "--dir", dir.c_str()}) args.emplace_back(a);
    if (!memory) args.insert(args.end(), {"--memory", "16MiB"});
    auto process = std::make_unique<BackgroundProcess>(
        stderr_redirection.empty() ? command(args) : redirected(command(args), stderr_redirection));
    const bool alive = eventually(
        [&] {
          auto st = status(keeper);
          return st.value("alive", false) && st["keeper_pid"].is_number() && st["keeper_pid"] == process->pid();
        },
        10s);
    REQUIRE(alive);
    return process;
  }

  /// `flashback status --nlohmann::json`, or an empty object when it fails.
  nlohmann::json status(const std::string& keeper = "default") const {
    auto r = run_cerulion(with({"flashback", "status", "--json", "--name", keeper}), {}, 20s);
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }

  /// Messages the store counts for `topic` (0 when it does not know the topic).
  std::uint64_t kept(const std::string& topic, const std::string& keeper = "default") const {
    auto st = status(keeper);
    for (const auto& t : st.value("topics", nlohmann::json::array())) {
      if (t["topic"] == topic) return t["messages"];
    }
    return 0;
  }

  /// The dumps in `dir`, oldest name first.
  std::vector<std::string> dumps() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (file.rfind("flashback-", 0) == 0 && file.size() > 5 && file.substr(file.size() - 5) == ".mcap") {
        out.push_back(it->path().string());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// A path in `dir` for an explicit `dump -o`.
  std::string path(const std::string& file) const { return (std::filesystem::path(dir) / file).string(); }

  const std::string name;
  const std::string dir;

 private:
  std::vector<std::string> keepers_;
};

struct DumpedMessage {
  std::string topic;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::string data;
};

/// Every message of a dump in file order, read with the recorder library (CRCs checked).
inline std::vector<DumpedMessage> dumped_messages(const std::string& file) {
  auto reader = cerulion::recorder::Reader::open(file);
  INFO(reader.message());
  REQUIRE(reader.ok());
  std::vector<DumpedMessage> out;
  auto st = reader->read_messages({}, [&](const cerulion::recorder::MessageView& m) {
    out.push_back({m.channel.topic, m.message.sequence, m.message.log_time,
                   std::string(reinterpret_cast<const char*>(m.message.data.data()), m.message.data.size())});
    return true;
  });
  REQUIRE(st.ok());
  CHECK(reader->problems().empty());
  return out;
}

inline std::vector<DumpedMessage> on_topic(const std::vector<DumpedMessage>& messages, const std::string& topic) {
  std::vector<DumpedMessage> out;
  for (const auto& m : messages) {
    if (m.topic == topic) out.push_back(m);
  }
  return out;
}

/// The Metadata record "flashback" of `cerulion info --nlohmann::json`, or null.
inline nlohmann::json flashback_metadata(const nlohmann::json& info) {
  for (const auto& m : info["metadata"]) {
    if (m["name"] == "flashback") return m["metadata"];
  }
  return nlohmann::json();
}

/// What `pub --fill counter` sends as message `n`: n little-endian, repeated.
inline std::string counter_payload(std::uint64_t n, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((n >> (8 * (i % 8))) & 0xFF);
  return out;
}

/// Messages the topic's segment says were published.
inline std::uint64_t published(const std::string& topic, const std::string& domain) {
  auto snapshot = topic_snapshot(topic, domain);
  return snapshot.is_null() ? 0 : snapshot["published"].get<std::uint64_t>();
}

inline bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && std::count(text.begin(), text.end(), '\n') == 1;
}

}  // namespace cerulion::test
