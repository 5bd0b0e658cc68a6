// SPDX-License-Identifier: Apache-2.0
// The bridge's Fast DDS engine (engine.hpp): a participant, a tap set (a thread per topic) feeding
// the exporter, the importer, and one control thread that follows DDS discovery, writes what new
// exporting writers held once they may, computes rates and replaces the status file once a second.

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <algorithm>
#include <map>
#include <tuple>
#include <optional>
#include <thread>
#include <unistd.h>

#include "cerulion/core/detail/shm_directory.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "bridge_events.hpp"
#include "engine.hpp"
#include "exporter.hpp"
#include "importer.hpp"
#include "loop_guard.hpp"
#include "participant.hpp"

namespace cerulion::bridge::detail {

namespace {
constexpr auto kDdsDiscoveryPoll = std::chrono::milliseconds(20);
constexpr auto kStatusPeriod = std::chrono::seconds(1);
/// DDS history depth accepted (Fast DDS preallocates nothing for it, but keep it sane).
constexpr std::uint32_t kMaxHistoryDepth = 10000;
}  // namespace

class DdsBridge final : public BridgeImpl {
 public:
  DdsBridge(BridgeOptions o, recording::TopicMatcher m)
      : options(std::move(o)), matcher(std::move(m)), events(options.events), tap_events(events) {}

  BridgeOptions options;
  recording::TopicMatcher matcher;  ///< what the importer takes (the tap set compiles its own)
  BridgeEvents events;
  TapEvents tap_events;
  LoopGuard guard;
  std::unique_ptr<Participant> participant;
  std::unique_ptr<Exporter> exporter;
  std::optional<recording::TapSet> taps;  ///< feeds the exporter: destroyed before it
  std::unique_ptr<Importer> importer;
  std::thread control;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool started = false;
  std::uint64_t started_ns = realtime_ns();
  mutable std::mutex status_mutex;
  BridgeStatus last;  ///< with the rates of the last period
  std::map<std::pair<std::string, bool>, std::pair<std::uint64_t, std::uint64_t>> previous;
  std::chrono::steady_clock::time_point previous_at = std::chrono::steady_clock::now();
  std::string status_path;
  std::string status_problem;  ///< the last failure to write the status file, "" after a success

  bool exports() const { return options.direction != Direction::Import; }
  bool imports() const { return options.direction != Direction::Export; }

  BridgeStatus snapshot() const {
    BridgeStatus s;
    s.pid = static_cast<std::uint32_t>(::getpid());
    s.domain = options.domain;
    s.dds_domain = options.dds_domain;
    s.direction = to_string(options.direction);
    s.reliable = options.reliable;
    s.depth = options.depth;
    s.started_realtime_ns = started_ns;
    s.updated_realtime_ns = realtime_ns();
    s.remote_participants = participant->remote_participants();
    if (exporter) {
      s.topics = exporter->topics(taps->counts());
    }
    if (importer) {
      for (auto& t : importer->topics()) s.topics.push_back(std::move(t));
    }
    s.problems = events.problems();
    std::sort(s.topics.begin(), s.topics.end(), [](const auto& a, const auto& b) {
      return std::tie(a.topic, a.imported) < std::tie(b.topic, b.imported);
    });
    return s;
  }

  void update_status() {
    BridgeStatus s = snapshot();
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - previous_at).count();
    decltype(previous) current;
    for (auto& t : s.topics) {
      const auto key = std::make_pair(t.topic, t.imported);
      auto it = previous.find(key);
      if (it != previous.end() && dt > 0) {
        t.rate_hz = static_cast<double>(t.messages - it->second.first) / dt;
        t.bytes_per_s = static_cast<double>(t.bytes - it->second.second) / dt;
      }
      current[key] = {t.messages, t.bytes};
    }
    previous = std::move(current);
    previous_at = now;
    if (options.status_file) {
      // Said once (until it is written again), as a view server does: `bridge status` cannot see this bridge.
      if (Status failed = cerulion::detail::new_failure(write_status_file(status_path, s), status_problem); !failed) {
        recording::report(&events, recording::EventKind::Warning, "",
                          "cannot keep the status file (`cerulion bridge status` will not see this bridge): " +
                              failed.message());
      }
    }
    std::lock_guard lock(status_mutex);
    last = std::move(s);
  }

  void run() {
    auto next_status = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex);
    while (!stopping) {
      lock.unlock();
      if (importer)
        for (const auto& w : participant->take_discoveries()) importer->discovered(w);
      if (exporter) exporter->service();
      if (std::chrono::steady_clock::now() >= next_status) {
        update_status();
        next_status += kStatusPeriod;
      }
      lock.lock();
      wake.wait_for(lock, kDdsDiscoveryPoll, [&] { return stopping; });
    }
  }

  Status start() override;
  BridgeStatus status() const override;

  void stop() override {
    {
      std::lock_guard lock(mutex);
      if (stopping || !started) {
        stopping = true;
        return;
      }
      stopping = true;
    }
    wake.notify_all();
    if (control.joinable()) control.join();
    if (taps) taps->stop();
    if (importer) importer->close();
    if (exporter) exporter->close();
    if (options.status_file) std::remove(status_path.c_str());
  }
};

Result<std::unique_ptr<BridgeImpl>> create_dds_bridge(BridgeOptions options) {
  if (options.dds_domain > kMaxDdsDomain) {
    return Status(ErrorCode::InvalidArgument, "DDS domain " + std::to_string(options.dds_domain) +
                                                  " is out of range (0 to " + std::to_string(kMaxDdsDomain) + ")");
  }
  if (options.depth == 0 || options.depth > kMaxHistoryDepth) {
    return Status(ErrorCode::InvalidArgument, "history depth " + std::to_string(options.depth) +
                                                  " is out of range (1 to " +
                                                  std::to_string(kMaxHistoryDepth) + ")");
  }
  if (Status st = validate_domain(options.domain); !st.ok()) return st;
  auto matcher = recording::TopicMatcher::compile(options.selection);
  if (!matcher) return matcher.status();
  if (matcher->empty()) {
    return Status(ErrorCode::InvalidArgument, "nothing to bridge: name topics, follow all, or give a pattern");
  }
  auto impl = std::make_unique<DdsBridge>(std::move(options), std::move(*matcher));
  impl->status_path = status_file_path(impl->options.status_directory, impl->options.domain,
                                       static_cast<std::uint32_t>(::getpid()));
  auto participant = Participant::create(impl->options);
  if (!participant) return participant.status();
  impl->participant = std::move(*participant);
  if (impl->exports()) {
    impl->exporter = std::make_unique<Exporter>(*impl->participant, impl->guard, impl->events, impl->started_ns);
    // A thread per topic, waiting on it: a message goes out as soon as it is published. A topic
    // that appears while the bridge runs is read from its first message, one that was there from
    // the oldest its ring holds (a restarted bridge resumes: exporter.hpp).
    recording::TapSetOptions taps;
    taps.selection = impl->options.selection;
    taps.domain = impl->options.domain;
    taps.lockstep = impl->options.lockstep;
    taps.readers = recording::Readers::PerTopic;
    taps.start = StartAt::First;
    taps.events = &impl->tap_events;
    auto created = recording::TapSet::create(std::move(taps), *impl->exporter);
    if (!created) return created.status();
    impl->taps.emplace(std::move(*created));
  }
  if (impl->imports()) {
    impl->importer = std::make_unique<Importer>(*impl->participant, impl->guard, impl->matcher,
                                                        impl->options.domain, impl->options.lockstep, impl->events);
    impl->importer->use_msg_path(ros2::MsgPath::from_environment(impl->options.msg_path));
  }
  return std::unique_ptr<BridgeImpl>(std::move(impl));
}

Status DdsBridge::start() {
  std::lock_guard lock(mutex);
  if (started || stopping) return Status(ErrorCode::InvalidArgument, "the bridge was already started");
  started = true;
  if (taps) taps->start();
  update_status();
  control = std::thread([this] { run(); });
  return {};
}

BridgeStatus DdsBridge::status() const {
  BridgeStatus s = snapshot();
  std::lock_guard lock(status_mutex);
  // Rates are those of the last period; counters are live.
  for (auto& t : s.topics) {
    for (const auto& p : last.topics) {
      if (p.topic == t.topic && p.imported == t.imported) {
        t.rate_hz = p.rate_hz;
        t.bytes_per_s = p.bytes_per_s;
      }
    }
  }
  return s;
}

}  // namespace cerulion::bridge::detail
