// `cerulion ping`: round-trip latency as benchmark-method.md measures it.

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/warm.hpp"
#include "command.hpp"
#include "latency_stats.hpp"
#include "pingpong.hpp"
#include "ping_run.hpp"
#include "ping_flashback.hpp"
#include "process_stats.hpp"

namespace cerulion::cli {
namespace {

std::uint64_t thread_cpu_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

/// How long before its slot the ping wakes and polls: covers a VM's timer wake-up latency.
constexpr std::uint64_t kPingLead = 250'000;

pid_t spawn_pong(const PingOptions& o) {
  std::vector<std::string> args{"/proc/self/exe", "--domain", o.domain, "pong", "--topic", o.prefix,
                                "--wait", to_string(o.wait), "--mode", to_string(o.mode), "--once"};
  if (o.cpus.pong) args.insert(args.end(), {"--cpu", std::to_string(*o.cpus.pong)});
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the ping that started it
    if (getppid() != parent) _exit(1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

CERULION_HOT_PATH PingReport run_ping(const PingOptions& o) {
  PingReport report;
  report.options = o;
  std::atomic<bool> pong_ready{false};
  std::atomic<bool> pong_stop{false};
  std::thread pong_thread;
  clockid_t pong_clock{};
  pid_t pong_pid = 0;

  SubscriberOptions sub_options;
  sub_options.topic.domain = o.domain;
  sub_options.wait = {o.wait, o.cancel};
  auto replies = take(Subscriber::create(reply_topic(o.prefix), sub_options), "ping");
  PublisherOptions pub_options;
  pub_options.topic.domain = o.domain;
  pub_options.topic.mode = o.mode;
  pub_options.wait = {o.wait, o.cancel};
  auto requests = take(Publisher::create(request_topic(o.prefix), pub_options), "ping");
  if (o.size > requests.max_payload()) {
    throw Exit{kExitUsage, fmt::format("ping: --size {} is over the topic's ceiling of {} bytes", o.size,
                                       requests.max_payload())};
  }

  std::optional<PingKeeper> keeper;
  if (o.flashback) keeper.emplace(o.domain, o.prefix, std::chrono::duration<double>(o.timeout).count());

  if (o.process == "single") {
    PongOptions po;
    po.domain = o.domain;
    po.prefix = o.prefix;
    po.mode = o.mode;
    po.wait = o.wait;
    po.stop_on_request = true;
    po.cpu = o.cpus.pong;
    po.cancel = &pong_stop;
    po.ready = &pong_ready;
    pong_thread = std::thread([po] {
      try {
        run_pong(po);
      } catch (const Exit& e) {
        if (!e.message.empty()) fmt::print(stderr, "cerulion: {}\n", e.message);
      }
    });
    while (!pong_ready.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pthread_getcpuclockid(pong_thread.native_handle(), &pong_clock);
  } else if (!o.peer) {
    pong_pid = spawn_pong(o);
    if (pong_pid < 0) throw Exit{kExitFailure, "ping: cannot start the pong process"};
  }
  auto stop_pong = [&] {
    if (pong_thread.joinable()) {
      pong_stop.store(true);
      // Wake the pong thread if it sleeps on the request futex.
      if (auto loan = requests.loan(kStampBytes, std::chrono::milliseconds(100)); loan.ok()) {
        std::memcpy(loan->data().data(), &kStopStamp, kStampBytes);
        (void)requests.publish(std::move(*loan), std::chrono::milliseconds(100));
      }
      pong_thread.join();
    }
    if (pong_pid > 0) {
      if (auto loan = requests.loan(kStampBytes, std::chrono::milliseconds(200)); loan.ok()) {
        std::memcpy(loan->data().data(), &kStopStamp, kStampBytes);
        (void)requests.publish(std::move(*loan), std::chrono::milliseconds(200));
      }
      for (int i = 0; i < 200; ++i) {
        if (waitpid(pong_pid, nullptr, WNOHANG) == pong_pid) {
          pong_pid = 0;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (pong_pid > 0) {
        kill(pong_pid, SIGKILL);
        waitpid(pong_pid, nullptr, 0);
      }
    }
  };

  // The peer (or the pong we started) must be attached before the first slot.
  Status joined = requests.wait_for_subscribers(1, o.timeout);
  if (!joined.ok()) {
    stop_pong();
    if (joined.code() == ErrorCode::Interrupted) throw Exit{stop_exit_code(), ""};
    throw Exit{kExitFailure, o.peer ? "ping: no `cerulion pong` answered on " + request_topic(o.prefix) +
                                          " within the timeout"
                                    : "ping: the pong worker did not start"};
  }

  // Pinned only now: the pong process and thread started above inherit our affinity.
  if (o.cpus.ping && !pin_current_thread(*o.cpus.ping)) {
    stop_pong();
    throw Exit{kExitFailure, fmt::format("ping: cannot pin to CPU {}", *o.cpus.ping)};
  }
  const std::uint64_t period_ns = o.rate_hz > 0 ? static_cast<std::uint64_t>(1e9 / o.rate_hz) : 0;
  const std::uint64_t total = o.warmup + o.count;
  std::vector<std::uint64_t> samples;
  samples.reserve(o.count);
  std::uint64_t cpu_start = 0, pong_cpu_start = 0, wall_start = 0;
  pid_t peer_pid = pong_pid;
  timespec next{};
  clock_gettime(CLOCK_MONOTONIC, &next);
  std::uint64_t grid_start = monotonic_ns() + 1'000'000;
  std::uint64_t slot = 0;
  std::uint64_t slot_deadline = 0;

  for (std::uint64_t done = 0; done < total;) {
    if (o.cancel && o.cancel->load()) {
      report.interrupted = true;
      break;
    }
    if (done == o.warmup && wall_start == 0) {
      wall_start = monotonic_ns();
      cpu_start = thread_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
      if (pong_thread.joinable()) pong_cpu_start = thread_cpu_ns(pong_clock);
      if (keeper) keeper->mark_start();
      else if (peer_pid > 0) pong_cpu_start = process_cpu_ns(peer_pid);
    }
    if (period_ns > 0) {
      const std::uint64_t slot_time = grid_start + slot * period_ns;
      std::uint64_t now = monotonic_ns();
      if (now >= slot_time + period_ns) {  // that slot is past: skip it, never send late
        const std::uint64_t behind = (now - slot_time) / period_ns;
        if (done >= o.warmup) report.skipped += behind;
        slot += behind;
        continue;
      }
      // Sleep to just before the slot, then poll up to it: a core woken from a 10 ms sleep is
      // cold, and its wake-up is late by tens of µs on a VM; the poll keeps the send on time.
      if (now + kPingLead < slot_time) {
        const std::uint64_t wake = slot_time - kPingLead;
        timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
      }
      slot_deadline = slot_time;
      ++slot;
    }
    // Loan first (the method times from the timestamp written after the loan), then wait for
    // the slot: the loan's work warms the path the publish takes.
    auto loan = requests.loan(o.size, o.timeout);
    if (!loan.ok()) {
      if (loan.code() == ErrorCode::Interrupted) { report.interrupted = true; break; }
      if (loan.code() == ErrorCode::Timeout) { report.pong_gone = true; ++report.lost; break; }
      stop_pong();
      check(loan.status(), "ping");
    }
    // Waiting for the slot on our own, so keep the next publish's memory in cache meanwhile.
    for (std::uint64_t now = monotonic_ns(), warmed = 0; now < slot_deadline; now = monotonic_ns()) {
      if (now - warmed > kWarmCachesIntervalNs) {
        warm_caches();
        warmed = now;
      }
      asm volatile("" ::: "memory");  // no PAUSE: see poll_relax() in core/src/futex.hpp
    }
    // The timestamp is the last thing written before publishing; no payload byte is filled.
    const std::uint64_t stamp = monotonic_ns();
    std::memcpy(loan->data().data(), &stamp, kStampBytes);
    auto sent = requests.publish(std::move(*loan), o.timeout);
    if (!sent.ok()) {
      if (sent.code() == ErrorCode::Interrupted) { report.interrupted = true; break; }
      report.pong_gone = true;
      ++report.lost;
      break;
    }
    // Wait for the echo of this very request (an older, late one is discarded).
    bool answered = false;
    const std::uint64_t deadline = stamp + static_cast<std::uint64_t>(o.timeout.count());
    while (!answered) {
      const std::uint64_t now = monotonic_ns();
      if (now >= deadline) break;
      auto reply = replies.receive(std::chrono::nanoseconds(deadline - now));
      if (!reply.ok()) {
        if (reply.code() == ErrorCode::Interrupted) report.interrupted = true;
        break;
      }
      const std::uint64_t arrived = monotonic_ns();
      if (peer_pid == 0) peer_pid = static_cast<pid_t>(reply->publisher_pid());
      std::uint64_t echoed = 0;
      std::memcpy(&echoed, reply->data().data(), kStampBytes);
      if (echoed == stamp) {
        answered = true;
        if (done >= o.warmup) samples.push_back(arrived - stamp);
      }
    }
    if (report.interrupted) break;
    if (!answered) {
      ++report.lost;
      // A pong that is gone will not come back: stop instead of timing out on every slot.
      bool pong_alive = pong_thread.joinable() || (pong_pid > 0 && waitpid(pong_pid, nullptr, WNOHANG) == 0) ||
                        (o.peer && replies.publisher_count() > 0);
      if (!pong_alive) {
        if (pong_pid > 0) pong_pid = 0;  // reaped above
        report.pong_gone = true;
        break;
      }
    }
    ++done;
  }
  const std::uint64_t wall_end = monotonic_ns();
  if (wall_start != 0 && wall_end > wall_start) {
    const double wall = static_cast<double>(wall_end - wall_start);
    report.cpu_pct_ping = 100.0 * static_cast<double>(thread_cpu_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / wall;
    if (pong_thread.joinable()) {
      report.cpu_pct_pong = 100.0 * static_cast<double>(thread_cpu_ns(pong_clock) - pong_cpu_start) / wall;
    } else if (peer_pid > 0) {
      std::uint64_t end_cpu = process_cpu_ns(peer_pid);
      if (end_cpu >= pong_cpu_start && end_cpu > 0) {
        report.cpu_pct_pong = 100.0 * static_cast<double>(end_cpu - pong_cpu_start) / wall;
      }
    }
    if (peer_pid > 0) report.rss_pong = process_peak_rss(peer_pid);
  }
  report.rss_ping = process_peak_rss(getpid());
  if (pong_thread.joinable()) report.rss_pong = report.rss_ping;
  stop_pong();
  if (keeper) report.keeper = keeper->finish(wall_start != 0 && wall_end > wall_start ? wall_end - wall_start : 0);
  report.samples_ns = std::move(samples);
  return report;
}

}  // namespace cerulion::cli
