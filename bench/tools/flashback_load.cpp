// SPDX-License-Identifier: Apache-2.0
// Flashback on a loaded machine (figures in docs/performance.md): three topics (1 kHz of
// 64 B, 100 Hz of 1 MiB, 30 Hz of JSON) kept by a `cerulion flashback start` keeper while busy
// loops at normal priority saturate every core; N dumps asked for while it runs and N after a
// kill -9 of it at a random moment (a new keeper takes the store over before the next). For each
// dump: how long before the request (or the kill) the first message it lacks was published, and
// its counted losses against the gaps in its sequences. --ask signal asks for the live dumps by
// SIGUSR1, so the keeper writes them itself (the dumps after a kill are still this process's).
//
//   build/bench/flashback-load [--dumps N] [--hogs N] [--priority idle|normal] [--ask dump|signal]
//                              [--cerulion build/cerulion]

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/options.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/sink.hpp"

using namespace cerulion;

namespace {

struct Stream {
  std::string topic;
  double rate_hz;
  std::size_t size;
  bool json;
  std::vector<std::uint64_t> published_ns;  // by sequence (pre-sized, written by its thread)
  std::atomic<std::uint64_t> count{0};
};

// A child of this tool (a keeper, a busy loop): stopped with it, whichever way it ends.
measurement::ChildProcess spawn(const std::vector<std::string>& argv) {
  measurement::ChildOptions o;
  o.argv = argv;
  auto child = measurement::ChildProcess::start(o);
  if (!child) {
    fmt::print(stderr, "flashback-load: {}\n", child.message());
    std::exit(1);
  }
  return std::move(*child);
}

// A process that keeps a CPU busy.
measurement::ChildProcess busy_loop() { return spawn({"sh", "-c", "while :; do :; done"}); }

void publish(Stream& s, const std::string& domain, std::atomic<bool>& stop) {
  PublisherOptions o;
  o.topic.domain = domain;
  o.topic.mode = Mode::FreeRun;
  auto publisher = Publisher::create(s.topic, o);
  if (!publisher) {
    fmt::print(stderr, "{}: {}\n", s.topic, publisher.message());
    std::exit(1);
  }
  std::vector<std::byte> data(s.size);
  const auto period = std::chrono::duration<double>(1.0 / s.rate_hz);
  auto next = std::chrono::steady_clock::now();
  while (!stop.load()) {
    const std::uint64_t n = s.count.load();
    if (s.json) {
      const std::string text = fmt::format(R"({{"n": {}, "pose": [1.5, 2.5, 0.25], "ok": true}})", n);
      data.assign(reinterpret_cast<const std::byte*>(text.data()), reinterpret_cast<const std::byte*>(text.data()) + text.size());
    } else {
      std::memcpy(data.data(), &n, std::min<std::size_t>(8, data.size()));
    }
    const std::uint64_t now = realtime_ns();
    auto seq = publisher->publish_copy(data);
    if (seq && *seq < s.published_ns.size()) s.published_ns[*seq] = now;
    s.count.store(n + 1);
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    std::this_thread::sleep_until(next);
  }
}

struct Result1 {
  std::string kind;
  double stale_ms = 0;         // request/kill time minus the publish time of the first message missing
  std::uint64_t lost = 0;      // counted in the dump's metadata
  std::uint64_t gaps = 0;      // sequence gaps in its content
  std::uint64_t messages = 0;
  std::uint64_t from_topics = 0;  // taken from the rings by the dump's catch-up
  std::string mismatch;           // the topics whose counted losses are not their gaps
  double written_ms = 0;          // a keeper's own dump: from SIGUSR1 to its file written
};

// A dump's bytes against what was published before `t`.
Result1 analyse(const recorder::ByteVector& file, std::uint64_t t, const std::vector<Stream*>& streams,
                const std::string& kind) {
  Result1 r;
  r.kind = kind;
  auto reader = recorder::Reader::open_memory(file);
  if (!reader) {
    fmt::print(stderr, "dump unreadable: {}\n", reader.message());
    return r;
  }
  std::map<std::string, std::uint32_t> newest, last;
  std::map<std::string, std::uint64_t> gaps;
  recorder::ReadMessagesOptions in_file_order;
  in_file_order.order = recorder::ReadOrder::File;
  (void)reader->read_messages(in_file_order, [&](const recorder::MessageView& m) {
    const auto& topic = m.channel.topic;
    if (auto it = last.find(topic); it != last.end()) gaps[topic] += m.message.sequence - it->second - 1;
    last[topic] = m.message.sequence;
    newest[topic] = std::max(newest[topic], m.message.sequence);
    ++r.messages;
    return true;
  });
  for (const auto& [topic, g] : gaps) r.gaps += g;
  if (auto md = reader->read_metadata(); md && !md->empty()) {
    if (auto summary = recorder::profile::parse_flashback_metadata(md->front()); summary) {
      for (const auto& c : summary->topics) {
        r.lost += c.lost;
        if (c.lost != gaps[c.topic]) r.mismatch += fmt::format(" {} lost {} gaps {};", c.topic, c.lost, gaps[c.topic]);
      }
    }
  }
  for (const Stream* s : streams) {
    auto it = newest.find(s->topic);
    const std::uint64_t first_missing = it == newest.end() ? 0 : std::uint64_t(it->second) + 1;
    if (first_missing >= s->count.load() || first_missing >= s->published_ns.size()) continue;
    const std::uint64_t published = s->published_ns[first_missing];
    if (published != 0 && published < t) r.stale_ms = std::max(r.stale_ms, static_cast<double>(t - published) / 1e6);
  }
  return r;
}

// Dumped here, as `cerulion flashback dump` would.
Result1 dump_here(const flashback::Store& store, std::uint64_t t, const std::vector<Stream*>& streams,
                  const std::string& kind) {
  recorder::ByteVector file;
  auto dumped = flashback::dump(store, std::make_unique<recorder::MemorySink>(file), {});
  if (!dumped) {
    fmt::print(stderr, "dump failed: {}\n", dumped.message());
    Result1 failed;
    failed.kind = kind;
    return failed;
  }
  Result1 r = analyse(file, t, streams, kind);
  r.from_topics = dumped->from_topics;
  return r;
}

// Dumped by the keeper itself, asked by SIGUSR1 (its file read, then removed).
Result1 dump_by_keeper(const flashback::Store& store, const measurement::ChildProcess& keeper, std::uint64_t t,
                       const std::vector<Stream*>& streams) {
  const std::uint64_t before = store.status().dumps;
  keeper.signal(SIGUSR1);
  for (int wait = 0; store.status().dumps == before && wait < 1200; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto written = store.status().last_dump;
  if (store.status().dumps == before || !written) {
    fmt::print(stderr, "the keeper wrote no dump within 60 s\n");
    Result1 failed;
    failed.kind = "signal";
    return failed;
  }
  std::ifstream in(written->path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* begin = reinterpret_cast<const std::byte*>(bytes.data());
  Result1 r = analyse(recorder::ByteVector(begin, begin + bytes.size()), t, streams, "signal");
  r.written_ms = static_cast<double>(written->realtime_ns - std::min(written->realtime_ns, t)) / 1e6;
  ::unlink(written->path.c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int dumps = 20;
  int hogs = static_cast<int>(std::thread::hardware_concurrency());
  std::string cerulion = "build/cerulion";
  std::string priority = "idle";  // the keeper's default
  std::string ask = "dump";       // live dumps: "dump" here (as `flashback dump`), "signal" by the keeper
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--dumps") dumps = std::atoi(argv[i + 1]);
    else if (a == "--hogs") hogs = std::atoi(argv[i + 1]);
    else if (a == "--cerulion") cerulion = argv[i + 1];
    else if (a == "--priority") priority = argv[i + 1];
    else if (a == "--ask") ask = argv[i + 1];
    else {
      fmt::print(stderr, "usage: flashback-load [--dumps N] [--hogs N] [--priority idle|normal] [--ask dump|signal] "
                         "[--cerulion PATH]\n");
      return 2;
    }
  }
  if (ask != "dump" && ask != "signal") {
    fmt::print(stderr, "flashback-load: --ask is dump or signal, not '{}'\n", ask);
    return 2;
  }
  // The keeper's own dumps go to a folder of this run's, removed at the end.
  std::string dump_dir = "/tmp/fbload-XXXXXX";
  if (::mkdtemp(dump_dir.data()) == nullptr) {
    fmt::print(stderr, "flashback-load: cannot make {}: {}\n", dump_dir, std::strerror(errno));
    return 1;
  }
  const std::string domain = fmt::format("fbload{}", ::getpid());
  const double run_s = 3.0 * dumps + 10;
  Stream fast{"/load/imu", 1000, 64, false, {}, {}}, big{"/load/camera", 100, 1 << 20, false, {}, {}},
      text{"/load/state", 30, 0, true, {}, {}};
  std::vector<Stream*> streams{&fast, &big, &text};
  for (Stream* s : streams) s->published_ns.assign(static_cast<std::size_t>(s->rate_hz * run_s * 2) + 1000, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> publishers;
  for (Stream* s : streams) publishers.emplace_back([&, s] { publish(*s, domain, stop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<measurement::ChildProcess> busy;
  for (int i = 0; i < hogs; ++i) busy.push_back(busy_loop());
  auto start_keeper = [&] {
    return spawn({cerulion, "--domain", domain, "flashback", "start", "--name", "load", "--dir", dump_dir, "--priority", priority, fast.topic,
                  big.topic, text.topic});
  };
  measurement::ChildProcess keeper = start_keeper();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::mt19937 rng(38);
  std::vector<Result1> results;
  for (int i = 0; i < 2 * dumps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500 + rng() % 1000));
    const bool kill = i % 2 == 1;
    // An idle-priority keeper started on a saturated machine may take seconds to take the store
    // (and, before, to install its SIGUSR1 handler).
    auto store = flashback::Store::open(domain, "load");
    auto taken = [&] {
      if (!store) return false;
      const auto st = store->status();
      return st.alive && st.keeper_pid == static_cast<std::uint32_t>(keeper.pid());
    };
    for (int wait = 0; !taken() && wait < 1200; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (!store) store = flashback::Store::open(domain, "load");
    }
    if (!taken()) {
      fmt::print(stderr, "store: {}\n", store ? "no live keeper within 60 s" : store.message());
      break;
    }
    const std::uint64_t t = realtime_ns();
    if (kill) (void)keeper.stop(std::chrono::seconds(0), SIGKILL);
    results.push_back(kill ? dump_here(*store, t, streams, "kill -9")
                           : ask == "signal" ? dump_by_keeper(*store, keeper, t, streams)
                                             : dump_here(*store, t, streams, "live"));
    const auto& r = results.back();
    // The keeper's own dump does not say how many it read from the rings.
    fmt::print("{:>2} {:<7} newest missing published {:7.1f} ms before; lost counted {:5} gaps {:5}; {} messages{}{}\n",
               i + 1, r.kind, r.stale_ms, r.lost, r.gaps, r.messages,
               r.kind == "signal" ? fmt::format(", written {:.0f} ms after SIGUSR1", r.written_ms)
                                  : fmt::format(", {} from the rings", r.from_topics),
               r.mismatch);
    std::fflush(stdout);
    if (kill) {
      keeper = start_keeper();
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  (void)keeper.stop();
  for (auto& p : busy) (void)p.stop(std::chrono::seconds(0), SIGKILL);
  stop.store(true);
  for (auto& t : publishers) t.join();
  (void)flashback::remove_store(domain, "load");
  std::error_code ignored;
  std::filesystem::remove_all(dump_dir, ignored);
  fmt::print("priority {}, live dumps by {}, {} busy loops\n", priority, ask == "signal" ? "SIGUSR1 (the keeper's own)" : "flashback dump", hogs);
  for (const std::string kind : {"live", "signal", "kill -9"}) {
    std::vector<double> stale, written;
    int exact = 0;
    for (const auto& r : results) {
      if (r.kind != kind) continue;
      stale.push_back(r.stale_ms);
      written.push_back(r.written_ms);
      exact += r.lost == r.gaps;
    }
    if (stale.empty()) continue;
    std::sort(stale.begin(), stale.end());
    std::sort(written.begin(), written.end());
    if (kind == "signal") {
      fmt::print("signal: written after SIGUSR1: median {:.0f} ms, max {:.0f} ms\n", written[written.size() / 2],
                 written.back());
    }
    fmt::print("{}: {} dumps, missing newest: median {:.1f} ms, max {:.1f} ms, within 50 ms {}/{}; counts exact {}/{}\n",
               kind, stale.size(), stale[stale.size() / 2], stale.back(),
               std::count_if(stale.begin(), stale.end(), [](double s) { return s <= 50; }), stale.size(), exact,
               stale.size());
  }
  return 0;
}
