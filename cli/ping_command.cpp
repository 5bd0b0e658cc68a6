// SPDX-License-Identifier: Apache-2.0
// The command line of `cerulion ping`: options, ping(8)-like output, --json.

#include <fmt/core.h>

#include "command.hpp"
#include "cerulion/measurement/samples_file.hpp"
#include "cerulion/measurement/slow_phases.hpp"
#include "cerulion/measurement/statistics.hpp"
#include "cpu_pinning.hpp"
#include "ping_run.hpp"

namespace cerulion::cli {
namespace {

using measurement::Summary;

struct PingArgs {
  std::string size = "64";
  std::string topic_ceiling = "1GiB";
  bool alternate = false;
  double rate = 100;
  std::uint64_t count = 2000;
  std::uint64_t warmup = 100;
  std::string process = "multi";
  std::string mode = "lockstep";
  std::string wait = "adaptive";
  std::string samples_out;
  bool json = false;
  bool peer = false;
  double timeout = 5;
  std::string prefix = measurement::kDefaultPrefix;
  std::string cpus = "auto";
  bool flashback = false;
  std::string transport = "native";
  std::uint32_t wait_set = 0;
  bool explain_tail = false;
  double cpu_budget_pct = kDefaultWaitCpuBudget * 100;
};

// A tail percentile of too few round trips is only their largest: it is left out ("-" in text,
// null in JSON) and the text says how many it needs.
constexpr double kP99 = 0.99;

std::string percentile_text(double value_us, std::size_t count, double p) {
  return measurement::quotable(count, p) ? fmt::format("{:.3f}", value_us) : "-";
}

void print_human(const PingRun& run, const measurement::PingFigures& f) {
  const auto& r = run.report;
  const Summary& s = f.round_trip_us;
  const auto& o = r.options;
  const std::string rate = o.rate_hz > 0 ? fmt::format("{:g} Hz", o.rate_hz) : std::string("back to back");
  fmt::print("PING {} ({} domain): {} payload at {}, {}-process, {}, {} wait, cpus {}\n", o.prefix, o.domain,
             format_bytes(static_cast<double>(o.size)), rate, measurement::to_string(o.layout), to_string(o.mode), to_string(o.wait),
             describe(o.cpus));
  fmt::print("--- ping statistics ---\n");
  fmt::print("{} round trips, {} lost, {} skipped slots\n", s.count, r.lost, r.skipped);
  if (s.count > 0) {
    const std::string note = measurement::quotable(s.count, kP99)
                                 ? std::string()
                                 : fmt::format(" (p99 needs at least {} round trips)", measurement::samples_to_quote(kP99));
    fmt::print("rtt min/median/p99/max = {:.3f}/{:.3f}/{}/{:.3f} µs{}\n", s.min, s.median,
               percentile_text(s.p99, s.count, kP99), s.max, note);
  }
  if (const auto& leg = f.request_one_way_us) {
    fmt::print("request one way (publish to pong's take) min/median/max = {:.3f}/{:.3f}/{:.3f} µs\n", leg->min,
               leg->median, leg->max);
  }
  const std::string cpu = r.cpu_pong_resolved
                              ? fmt::format("cpu ping {:.1f}%, pong {:.1f}% of the run", r.cpu_pct_ping, r.cpu_pct_pong)
                              : fmt::format("cpu ping {:.1f}% of the run, pong - ({:.1f} ms is too short to read "
                                            "another process's CPU)",
                                            r.cpu_pct_ping, static_cast<double>(r.measured_wall_ns) / 1e6);
  fmt::print("{}; peak rss ping {}, pong {}\n", cpu, format_bytes(static_cast<double>(r.rss_ping)),
             format_bytes(static_cast<double>(r.rss_pong)));
  if (const auto& k = run.keeper) {
    fmt::print("flashback keeper: cpu {:.1f}%, peak rss {}, took {} messages ({} lost), held {} (compression {:.2f}x)\n",
               k->cpu_pct, format_bytes(static_cast<double>(k->rss_bytes)), k->messages, k->lost,
               format_bytes(static_cast<double>(k->memory_bytes)), k->compression_ratio);
  }
  if (const auto& a = f.alternate) {
    fmt::print("alternating: on the topics median {:.3f} µs ({} round trips), through wait sets of {} median "
               "{:.3f} µs ({}); ratio {:.2f}\n",
               a->direct_us.median, a->direct_us.count, o.wait_set_members, a->wait_set_us.median,
               a->wait_set_us.count, a->median_ratio);
  }
  if (r.responder_gone) fmt::print("pong went away during the run\n");
  if (r.peer_may_share_cpu) {
    fmt::print("note: the pong may run on CPU {}, where ping runs; a side polling there can hold the other back "
               "(start it with `cerulion pong --cpu N`, N another CPU)\n",
               *r.options.cpus.ping);
  }
}

/// The late round trips, which part of each was late and why (`--explain-tail`).
void print_tail(const measurement::TailBreakdown& b) {
  fmt::print("--- tail: {} of {} round trips over {:g}x the median ({:.3f} µs) ---\n", b.late, b.trips, b.factor,
             b.median_us);
  if (!b.rows.empty()) {
    fmt::print("{:<10} {:>5}  {:>21}  {:>10}  {}\n", "late part", "trips", "by median/max µs", "rtt median", "why");
    for (const auto& r : b.rows) {
      fmt::print("{:<10} {:>5}  {:>21}  {:>10.3f}  {}\n", measurement::to_string(r.part), r.count,
                 fmt::format("{:.3f}/{:.3f}", r.median_by_us, r.max_by_us), r.median_rtt_us, measurement::describe(r.cause));
    }
  }
  if (b.futex_legs > 0) {
    fmt::print("futex wake-ups (all round trips): {} legs, publish to seen median/p99/max = {:.3f}/{:.3f}/{:.3f} µs\n",
               b.futex_legs, b.futex_median_us, b.futex_p99_us, b.futex_max_us);
  } else {
    fmt::print("futex wake-ups (all round trips): none\n");
  }
  fmt::print("requests left after their slot by median/max = {:.3f}/{:.3f} µs\n", b.send_lateness_median_us,
             b.send_lateness_max_us);
}

/// The slow phases: windows whose median is far above the run's best (`--explain-tail`).
void print_phases(const measurement::SlowPhases& p) {
  fmt::print("--- slow phases: {} in {} windows of {} round trips (slow: median over {:g} µs and {:g}x the fastest "
             "window's {:.3f} µs) ---\n",
             p.phases.size(), p.windows, p.rule.window, p.rule.floor_us, p.rule.factor, p.fastest_window_us);
  for (const auto& ph : p.phases) {
    fmt::print("round trips {}-{}: median {:.3f} µs\n", ph.first, ph.end - 1, ph.median_us);
    auto side = [](const char* name, const measurement::PhaseSide& d) {
      fmt::print("  {} waits: {} of {} missed ({}; {} fell back to blocking), arrival - prediction {:.3f} µs, margin "
                 "{:.3f} µs, poll window {:.3f} µs past it, oversleep {:.3f} µs (medians)\n",
                 name, d.missed, d.waits, d.missed > 0 ? measurement::describe(d.cause) : "-", d.fallen_back,
                 d.arrival_minus_predicted_us, d.margin_us, d.window_us, d.oversleep_us);
    };
    side("pong", ph.responder);
    side("ping", ph.requester);
  }
}

}  // namespace

void add_ping_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ping", "Measure round-trip latency to a pong (started for you, or --peer)");
  cmd->footer(
      "Examples:\n"
      "  cerulion ping                      # 64 B at 100 Hz, two processes\n"
      "  cerulion ping -s 16MiB -c 500 --json\n"
      "  cerulion ping -r 0 -c 100000 --wait spin\n"
      "  cerulion pong & cerulion ping --peer");
  auto a = std::make_shared<PingArgs>();
  cmd->add_option("-s,--size", a->size, "Payload size: 64, 4KiB, 1MiB, 16MiB (at least 8 bytes)")
      ->transform(size_at_most(kLargestPayload))->capture_default_str();
  cmd->add_option("-r,--rate", a->rate, "Requests per second on a fixed slot grid; 0 = back to back")
      ->check(rate_hz(1e6))->capture_default_str();
  cmd->add_option("-c,--count", a->count, "Measured round trips")->check(count_in(1, 100'000'000))
      ->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "Round trips before measuring")->check(count_in(0, 100'000'000))->capture_default_str();
  cmd->add_option("--process", a->process, "multi: pong in a second process; single: a thread")
      ->check(CLI::IsMember({"multi", "single"}))->capture_default_str();
  cmd->add_option("--mode", a->mode, "Topic mode")->check(CLI::IsMember({"lockstep", "free-run"}))
      ->capture_default_str();
  cmd->add_option("--wait", a->wait, "Wait strategy")->check(CLI::IsMember({"adaptive", "spin", "block"}))
      ->capture_default_str();
  cmd->add_option("--samples-out", a->samples_out, "Write each round trip as little-endian u64 ns");
  cmd->add_flag("--json", a->json, "Print one JSON object instead of text");
  cmd->add_option("--transport", a->transport,
                  "What carries the round trips: native (cerulion), or fastdds / iceoryx where this build has them")
      ->check([](const std::string& name) {
        // Only the transport named is loaded: `ping` on native never loads Fast DDS or iceoryx.
        const Status usable = measurement::check_transport(name);
        return usable.ok() ? std::string() : usable.message();
      })
      ->capture_default_str();
  auto* peer = cmd->add_flag("--peer", a->peer, "Use a `cerulion pong` that is already running");
  cmd->add_option("--timeout", a->timeout, "Seconds to wait for a reply before counting it lost")
      ->transform(positive_duration())->capture_default_str();
  cmd->add_option("--topic", a->prefix, "Topic prefix: requests on PREFIX/ping, replies on PREFIX/pong")
      ->capture_default_str();
  cmd->add_option("--cpus", a->cpus,
                  "Pin ping and pong to CPUs PING,PONG; auto: the first two this process may use "
                  "(as the floor benchmark does); none: leave them to the scheduler")
      ->capture_default_str();
  cmd->add_option("--wait-set", a->wait_set,
                  "Both sides wait through a wait set of N topics (theirs and N-1 idle ones), as a node "
                  "listening to several topics in one thread does (native only; 0 = on the topic itself)")
      ->check(count_in(0, 64));
  cmd->add_flag("--alternate", a->alternate,
                "With --wait-set: every other round trip waits on the topics themselves, so one run compares "
                "both ways (a median each, and their ratio)");
  cmd->add_option("--topic-ceiling", a->topic_ceiling,
                  "Payload ceiling of the topics this run creates (native)")
      ->transform(size_at_most(kLargestPayload))->capture_default_str();
  cmd->add_flag("--flashback", a->flashback,
                "Run a flashback keeper (a separate process) on the ping topics during the measurement");
  cmd->add_flag("--explain-tail", a->explain_tail,
                "Record both sides' waits and say, for round trips over 5x the median, which wake-up was "
                "late and by how much (native, 64 B and more; a --peer pong needs --explain-tail too)");
  cmd->add_option("--cpu-budget", a->cpu_budget_pct,
                  "Adaptive wait: the % of a CPU each side's polling may take; more polls through more of a late "
                  "message instead of a futex wake-up (also given to the pong this starts)")
      ->check(number_in(0.1, 100.0, "a percentage of a CPU"))->capture_default_str();
  (void)peer;
  cmd->callback([a] {
    if (a->peer && a->process == "single") throw CLI::ValidationError("--peer", "--peer runs with --process multi");
    measurement::PingOptions o;
    o.domain = globals().domain;
    o.prefix = a->prefix;
    o.size = parse_size(a->size).value_or(0);
    if (o.size < measurement::kStampBytes) throw CLI::ValidationError("--size", "must be at least 8 bytes (the timestamp)");
    o.rate_hz = a->rate;
    o.count = a->count;
    o.warmup = a->warmup;
    o.layout = a->process == "single" ? measurement::Layout::SingleProcess : measurement::Layout::MultiProcess;
    o.mode = parse_mode(a->mode).value_or(Mode::Lockstep);
    o.wait = parse_wait(a->wait).value_or(WaitStrategy::Adaptive);
    o.peer = a->peer;
    o.transport = a->transport;
    if (a->wait_set > 0 && o.transport != "native") {
      throw CLI::ValidationError("--wait-set", "applies to the native transport only");
    }
    o.wait_set_members = a->wait_set;
    if (a->alternate && a->wait_set == 0) throw CLI::ValidationError("--alternate", "needs --wait-set N");
    o.alternate_wait_set = a->alternate;
    o.topic_ceiling = parse_size(a->topic_ceiling).value_or(kDefaultMaxPayload);
    if (o.topic_ceiling < o.size) throw CLI::ValidationError("--topic-ceiling", "is smaller than --size");
    if (a->explain_tail && (o.transport != "native" || o.size < measurement::kTraceReplyBytes)) {
      throw CLI::ValidationError("--explain-tail", fmt::format("needs --transport native and --size of at least {} bytes",
                                                               measurement::kTraceReplyBytes));
    }
    o.explain_tail = a->explain_tail;
    o.cpu_budget = a->cpu_budget_pct / 100;
    o.cpus = parse_cpu_plan(a->cpus);
    if (o.peer) o.cpus.pong.reset();  // that pong was started elsewhere: `cerulion pong --cpu N` pins it
    o.timeout = std::chrono::nanoseconds(static_cast<std::int64_t>(a->timeout * 1e9));
    install_stop_handlers();
    o.cancel = stop_flag();
    const PingRun run = run_ping(o, a->flashback);
    const measurement::PingReport& report = run.report;
    const measurement::PingFigures figures = measurement::figures_of(report);
    if (!a->samples_out.empty()) {
      if (Status written = measurement::write_samples_le_u64(a->samples_out, report.samples_ns); !written.ok()) {
        throw Exit{kExitFailure, fmt::format("cannot write --samples-out '{}': {}", a->samples_out, written.message())};
      }
    }
    if (a->json) fmt::print("{}\n", measurement::to_json(measurement::summary_of(report, figures, run.keeper)));
    else print_human(run, figures);
    if (a->explain_tail && !a->json) {
      print_tail(measurement::explain_tail(report.samples_ns, report.traces));
      print_phases(measurement::find_slow_phases(report.samples_ns, report.traces));
    }
    if (report.interrupted) throw Exit{stop_exit_code(), ""};
    if (report.lost > 0 || report.responder_gone) {
      throw Exit{kExitFailure, fmt::format("{} round trip(s) went missing{}", report.lost,
                                           report.responder_gone ? " (the pong went away)" : "")};
    }
  });
}

}  // namespace cerulion::cli
