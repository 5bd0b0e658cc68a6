// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/ping_runner.hpp"

#include <csignal>
#include <sstream>
#include <string_view>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/measurement/fastdds_files.hpp"
#include "cerulion/measurement/ping_summary.hpp"
#include "cerulion/measurement/samples_file.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::bench {
namespace {

using measurement::ChildExit;
using measurement::ChildOptions;
using measurement::ChildProcess;
using measurement::Stream;

// The last non-empty line of a child's stderr: what it said when it failed.
std::string last_line(const std::string& text) {
  std::string line, last;
  std::stringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  if (last.rfind("cerulion: ", 0) == 0) last = last.substr(10);
  return last;
}

// What a pong that failed said, from ping's stderr (a pong process writes there, and ping reports
// its pong thread's error there too): "pong: ... /dev/shm is full ...". Empty when it said nothing.
std::string pong_said(const std::string& text) {
  constexpr std::string_view kProgram = "cerulion: ";
  std::string line, said;
  std::stringstream in(text);
  while (std::getline(in, line)) {
    if (line.rfind("cerulion: pong: ", 0) == 0) said = line.substr(kProgram.size());
  }
  return said;
}

/// A descriptor closed on every way out.
struct OwnedFd {
  int fd = -1;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

PingRunner::PingRunner(PingRunnerOptions options) : options_(std::move(options)) {}

Result<Repetition> PingRunner::run(const RepetitionRequest& q) {
  const Lane& lane = *q.lane;
  // A topic pair of its own per repetition: nothing of the previous one is reused.
  const std::string prefix = fmt::format("/cerulion/bench/{}/{}", ::getpid(), ++sequence_);
  OwnedFd samples;
  std::string samples_out = q.samples_path;
  if (samples_out.empty()) {
    auto fd = measurement::open_anonymous_file();
    if (!fd) return Status(ErrorCode::SystemError, "cannot hold ping's samples: " + fd.message());
    samples.fd = *fd;
    samples_out = "/dev/fd/3";  // the file passed to the ping (pass_fds below)
  }
  ChildOptions c;
  c.program = options_.program;
  c.argv = {"cerulion", "--domain", options_.domain, "ping", "--topic", prefix,
            "-s", std::to_string(q.size), "-r", fmt::format("{:g}", q.rate_hz),
            "-c", std::to_string(q.samples), "--warmup", std::to_string(q.warmup),
            "--process", lane.process, "--wait", lane.wait.empty() ? q.wait : lane.wait, "--json", "--samples-out", samples_out};
  if (lane.transport != "native") c.argv.insert(c.argv.end(), {"--transport", lane.transport});
  if (!lane.mode.empty()) c.argv.insert(c.argv.end(), {"--mode", lane.mode});
  if (q.flashback) c.argv.push_back("--flashback");
  if (samples.fd >= 0) c.pass_fds = {samples.fd};
  c.out = Stream::Capture;
  c.err = Stream::Capture;
  auto child = ChildProcess::start(c);
  if (!child) return Status(ErrorCode::SystemError, "cannot start ping: " + child.message());

  const double expected_s = static_cast<double>(q.samples + q.warmup) / q.rate_hz;
  const auto timeout = std::chrono::seconds(static_cast<long>(expected_s * 3 + 30));
  std::optional<ChildExit> end = child->wait_for(timeout, options_.cancel);
  const bool interrupted = !end && options_.cancel && options_.cancel->load();
  const bool timed_out = !end && !interrupted;
  if (!end) end = child->stop(options_.stop_grace);
  if (end->signal != 0) {
    // Killed (by us after the grace, or by a crash) before it could leave its topics; its group
    // is gone with it, so what it left is ours to remove.
    for (const auto& topic : {measurement::request_topic(prefix), measurement::reply_topic(prefix)}) {
      (void)clean_domain(options_.domain, false, topic);
    }
    if (lane.transport == "fastdds") (void)measurement::remove_dead_fastdds_files();
  }
  if (interrupted) return Status(ErrorCode::Interrupted, "interrupted");
  if (timed_out) return Status(ErrorCode::SystemError, fmt::format("timed out after {} s", timeout.count()));
  if (end->signal != 0) return Status(ErrorCode::SystemError, fmt::format("ping died of signal {}", end->signal));
  auto summary = measurement::ping_summary_from_json(end->out);
  if (!summary) {
    const std::string said = last_line(end->err);
    return Status(ErrorCode::SystemError,
                  said.empty() ? fmt::format("ping exited {} without a report", end->exit_code) : said);
  }
  if (summary->pong_gone) {
    // A pong ends early because it failed (a full /dev/shm...) more often than by itself: the cause.
    const std::string said = pong_said(end->err);
    return Status(ErrorCode::SystemError, said.empty() ? "the pong went away" : said);
  }
  Repetition rep;
  auto read = measurement::read_samples_le_u64(samples.fd >= 0 ? fmt::format("/proc/self/fd/{}", samples.fd) : samples_out);
  if (!read) return Status(ErrorCode::SystemError, "cannot read ping's samples: " + read.message());
  rep.samples_ns = std::move(*read);
  rep.skipped_slots = summary->skipped_slots;
  rep.lost = summary->lost;
  rep.cpu_pct_ping = summary->cpu_pct_ping;
  rep.cpu_pct_pong = summary->cpu_pct_pong;
  rep.rss_ping = summary->rss_ping;
  rep.rss_pong = summary->rss_pong;
  const double slots = static_cast<double>(q.samples + rep.skipped_slots);
  rep.achieved_rate_hz = slots > 0 ? q.rate_hz * static_cast<double>(q.samples) / slots : 0;
  if (rep.samples_ns.empty() && q.samples > 0) return Status(ErrorCode::SystemError, "ping wrote no samples");
  return rep;
}

}  // namespace cerulion::bench
