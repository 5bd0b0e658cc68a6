// SPDX-License-Identifier: Apache-2.0
// One measurement: the requester here, a responder beside it, the measured loop between them.

#include "cerulion/measurement/ping.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>
#include <unistd.h>

#include "cerulion/measurement/resource_meter.hpp"
#include "cerulion/measurement/responder.hpp"
#include "cerulion/measurement/round_trip.hpp"

namespace cerulion::measurement {

const char* to_string(Layout layout) noexcept {
  return layout == Layout::SingleProcess ? "single" : "multi";
}

namespace {

/// The responder this measurement started (a thread or a process), stopped on every way out.
class ResponderHandle {
 public:
  explicit ResponderHandle(Requester& requester) : requester_(requester) {}
  ~ResponderHandle() { stop(); }
  ResponderHandle(const ResponderHandle&) = delete;
  ResponderHandle& operator=(const ResponderHandle&) = delete;

  /// A thread running the responder; returns once it is attached, or its error.
  Status start_thread(const PingOptions& o) {
    ResponderRunOptions ro;
    ro.transport = o.transport;
    ro.transport_options.domain = o.domain;
    ro.transport_options.prefix = o.prefix;
    ro.transport_options.max_payload = o.size;
    ro.transport_options.same_process = true;
    ro.transport_options.wait = o.wait;
    ro.transport_options.wait_set_members = o.wait_set_members;
    ro.transport_options.topic_ceiling = o.topic_ceiling;
    ro.transport_options.alternate_wait_set = o.alternate_wait_set;
    ro.transport_options.cancel = &stop_;
    ro.transport_options.mode = o.mode;
    ro.transport_options.stop_on_request = true;
    ro.transport_options.trace_waits = o.explain_tail;
    ro.transport_options.cpu_budget = o.cpu_budget;
    ro.cpu = o.cpus.pong;
    ro.ready = &ready_;
    thread_ = std::thread([this, ro] {
      Status s = run_responder(ro);
      if (!s.ok()) error_ = s;
      finished_.store(true);
    });
    while (!ready_.load() && !finished_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!ready_.load()) {
      thread_.join();
      return error_;
    }
    return {};
  }

  void adopt_process(ChildProcess process) { process_ = std::move(process); }
  bool is_thread() const { return thread_.joinable(); }
  pthread_t native_thread() { return thread_.native_handle(); }
  /// The responder process this measurement started; 0 for a thread or a peer.
  pid_t pid() const { return process_.pid() > 0 ? process_.pid() : 0; }

  /// After a reply went missing: a thread is trusted to be alive (it never dies alone); a process
  /// is asked; a peer is alive while it is attached.
  bool alive() {
    if (thread_.joinable()) return !finished_.load();
    if (process_.pid() > 0) return process_.running();
    return requester_.responder_present();
  }

  void stop() {
    if (thread_.joinable()) {
      stop_.store(true);
      // Wake the thread if it sleeps on the request topic.
      send_stop(std::chrono::milliseconds(100));
      thread_.join();
    }
    if (process_.pid() > 0 && process_.running()) {
      send_stop(std::chrono::milliseconds(200));
      // The stop request is the polite way; a process that missed it is signalled.
      if (!process_.wait_for(std::chrono::seconds(1))) (void)process_.stop(std::chrono::milliseconds(500));
    }
  }

  const std::string error() const { return error_.ok() ? std::string() : error_.message(); }

 private:
  void send_stop(std::chrono::nanoseconds timeout) {
    if (requester_.prepare(kStampBytes, timeout).ok()) (void)requester_.send(kStopStamp, timeout);
  }

  Requester& requester_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> ready_{false};
  std::atomic<bool> finished_{false};
  Status error_;
  ChildProcess process_;
};

}  // namespace

AlternateSamples split_alternate(const PingReport& report) {
  AlternateSamples split;
  for (std::size_t i = 0; i < report.samples_ns.size(); ++i) {
    ((report.options.warmup + i) % 2 == 0 ? split.direct_ns : split.wait_set_ns).push_back(report.samples_ns[i]);
  }
  return split;
}

PingFigures figures_of(const PingReport& report) {
  PingFigures figures;
  figures.round_trip_us = summarize(to_microseconds(report.samples_ns));
  if (!report.request_legs_ns.empty()) figures.request_one_way_us = summarize(to_microseconds(report.request_legs_ns));
  if (report.options.alternate_wait_set) {
    const AlternateSamples split = split_alternate(report);
    PingFigures::Alternate a;
    a.direct_us = summarize(to_microseconds(split.direct_ns));
    a.wait_set_us = summarize(to_microseconds(split.wait_set_ns));
    a.median_ratio = a.direct_us.median > 0 ? a.wait_set_us.median / a.direct_us.median : 0.0;
    figures.alternate = a;
  }
  return figures;
}

Result<PingReport> run_ping(const PingOptions& o) {
  if (o.size < kStampBytes) {
    return Status{ErrorCode::InvalidArgument, "a request must hold the 8-byte timestamp"};
  }
  if (o.explain_tail && (o.transport != "native" || o.size < kTraceReplyBytes)) {
    return Status{ErrorCode::InvalidArgument, "explaining the tail needs the native transport and requests of at least " +
                                                  std::to_string(kTraceReplyBytes) + " bytes"};
  }
  RequesterOptions ro;
  ro.domain = o.domain;
  ro.prefix = o.prefix;
  ro.max_payload = o.size;
  ro.same_process = o.layout == Layout::SingleProcess;
  ro.wait = o.wait;
  ro.wait_set_members = o.wait_set_members;
  ro.topic_ceiling = o.topic_ceiling;
  ro.alternate_wait_set = o.alternate_wait_set;
  ro.cancel = o.cancel;
  ro.mode = o.mode;
  ro.trace_waits = o.explain_tail;
  ro.cpu_budget = o.cpu_budget;
  auto created = create_requester(o.transport, ro);
  if (!created.ok()) return created.status();
  Requester& requester = **created;
  if (o.size > requester.max_payload()) {
    return Status{ErrorCode::PayloadTooLarge,
                  "a payload of " + std::to_string(o.size) + " bytes is over topic '" + request_topic(o.prefix) +
                      "' ceiling of " + std::to_string(requester.max_payload()) + " bytes",
                  Subject::size_over(request_topic(o.prefix), o.size, requester.max_payload())};
  }
  if (o.hooks.before_responder) {
    if (Status s = o.hooks.before_responder(); !s.ok()) return s;
  }

  ResponderHandle responder(requester);
  if (o.layout == Layout::SingleProcess) {
    if (Status s = responder.start_thread(o); !s.ok()) return s;
  } else if (!o.peer) {
    if (!o.start_responder_process) {
      return Status{ErrorCode::InvalidArgument, "a multi-process measurement needs a peer or a way to start one"};
    }
    auto process = o.start_responder_process(o);
    if (!process.ok()) return process.status();
    responder.adopt_process(std::move(*process));
  }

  // The responder must be attached before the first slot.
  if (Status joined = requester.wait_for_responder(o.timeout); !joined.ok()) {
    if (joined.code() == ErrorCode::Interrupted) return joined;
    return Status{ErrorCode::Timeout, o.peer ? "no responder answered on " + request_topic(o.prefix) +
                                                   " within the timeout"
                                             : "the responder did not start"};
  }
  // Pinned only now: the responder process and thread started above inherit our affinity.
  if (o.cpus.ping && !pin_current_thread(*o.cpus.ping)) {
    return Status{ErrorCode::SystemError, "cannot pin to CPU " + std::to_string(*o.cpus.ping)};
  }

  CpuMeter ping_cpu = CpuMeter::calling_thread();
  CpuMeter pong_cpu;
  if (responder.is_thread()) pong_cpu = CpuMeter::thread(responder.native_thread());
  pid_t peer_pid = responder.pid();

  RoundTripPlan plan;
  plan.size = o.size;
  plan.rate_hz = o.rate_hz;
  plan.count = o.count;
  plan.warmup = o.warmup;
  plan.timeout = o.timeout;
  plan.cancel = o.cancel;
  plan.trace = o.explain_tail;
  plan.on_measured_start = [&](std::int64_t replied_pid) {
    ping_cpu.start();
    if (!responder.is_thread()) {
      if (peer_pid == 0) peer_pid = static_cast<pid_t>(replied_pid);
      if (peer_pid > 0) pong_cpu = CpuMeter::process(peer_pid);
    }
    pong_cpu.start();
    if (o.hooks.measured_start) o.hooks.measured_start();
  };
  plan.responder_alive = [&] { return responder.alive(); };
  RoundTrips trips = run_round_trips(requester, plan);
  if (!trips.error.ok()) return trips.error;

  PingReport report;
  report.options = o;
  // The callbacks may hold references into the caller's frame: the report outlives them.
  report.options.hooks = {};
  report.options.start_responder_process = nullptr;
  report.lost = trips.lost;
  report.skipped = trips.skipped;
  report.responder_gone = trips.responder_gone;
  report.interrupted = trips.interrupted;
  if (peer_pid == 0) peer_pid = static_cast<pid_t>(trips.responder_pid);
  if (trips.measured_start_ns != 0 && trips.end_ns > trips.measured_start_ns) {
    report.measured_wall_ns = trips.end_ns - trips.measured_start_ns;
    report.cpu_pct_ping = ping_cpu.percent(report.measured_wall_ns);
    report.cpu_pct_pong = pong_cpu.percent(report.measured_wall_ns);
    report.cpu_pong_resolved = responder.is_thread() || report.measured_wall_ns >= kOtherProcessCpuResolutionNs;
    if (!responder.is_thread() && peer_pid > 0) report.rss_pong = process_peak_rss(peer_pid);
  }
  if (o.peer && o.cpus.ping && peer_pid > 0) {
    const std::vector<int> peer_cpus = allowed_cpus_of(peer_pid);
    report.peer_may_share_cpu = std::find(peer_cpus.begin(), peer_cpus.end(), *o.cpus.ping) != peer_cpus.end();
  }
  report.rss_ping = process_peak_rss(getpid());
  if (responder.is_thread()) report.rss_pong = report.rss_ping;
  responder.stop();
  report.responder_error = responder.error();
  if (o.hooks.after_run) o.hooks.after_run(report.measured_wall_ns);
  report.samples_ns = std::move(trips.samples_ns);
  report.request_legs_ns = std::move(trips.request_legs_ns);
  report.traces = std::move(trips.traces);
  return report;
}

}  // namespace cerulion::measurement
