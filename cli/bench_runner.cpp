// SPDX-License-Identifier: Apache-2.0
#include "bench_runner.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/measurement/samples_file.hpp"
#include "command.hpp"

#ifndef CERULION_COMMIT
#define CERULION_COMMIT ""
#endif

namespace cerulion::cli {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

struct ChildOutput {
  int status = 0;
  bool timed_out = false;
  std::string out, err;
};

ChildOutput run_child(const std::vector<std::string>& args, std::chrono::seconds timeout, const std::string& scratch) {
  ChildOutput r;
  const std::string out_path = scratch + ".out", err_path = scratch + ".err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const pid_t done = ::waitpid(pid, &r.status, WNOHANG);
    if (done == pid) break;
    if (stop_requested() || std::chrono::steady_clock::now() > deadline) {
      r.timed_out = !stop_requested();
      ::kill(pid, SIGINT);
      for (int i = 0; i < 100 && ::waitpid(pid, &r.status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (::kill(pid, 0) == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &r.status, 0);
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return r;
}

}  // namespace

std::string build_commit() { return CERULION_COMMIT; }

BenchRunner::BenchRunner(std::string domain) : domain_(std::move(domain)) {}

Result<bench::Repetition> BenchRunner::run(const bench::RepetitionRequest& q) {
  const bench::Lane& lane = *q.lane;
  const std::string scratch =
      (std::filesystem::temp_directory_path() / fmt::format("cerulion-bench-{}-{}", ::getpid(), sequence_++)).string();
  const std::string samples_path = q.samples_path.empty() ? scratch + ".u64le" : q.samples_path;
  // A topic pair of its own per repetition: nothing of the previous one is reused.
  std::vector<std::string> args{"cerulion", "--domain", domain_, "ping",
                                "--topic", fmt::format("/cerulion/bench/{}/{}", ::getpid(), sequence_),
                                "-s", std::to_string(q.size), "-r", fmt::format("{:g}", q.rate_hz),
                                "-c", std::to_string(q.samples), "--warmup", std::to_string(q.warmup),
                                "--process", lane.process, "--wait", q.wait, "--json", "--samples-out", samples_path};
  if (lane.transport != "native") args.insert(args.end(), {"--transport", lane.transport});
  if (!lane.mode.empty()) args.insert(args.end(), {"--mode", lane.mode});
  if (q.flashback) args.push_back("--flashback");
  const double expected_s = static_cast<double>(q.samples + q.warmup) / q.rate_hz;
  const auto timeout = std::chrono::seconds(static_cast<long>(expected_s * 3 + 30));
  auto child = run_child(args, timeout, scratch);
  auto fail = [&](const std::string& why) -> Result<bench::Repetition> {
    if (q.samples_path.empty()) ::unlink(samples_path.c_str());
    return Status(ErrorCode::SystemError, why);
  };
  if (child.timed_out) return fail(fmt::format("timed out after {} s", timeout.count()));
  if (WIFSIGNALED(child.status)) return fail(fmt::format("ping died of signal {}", WTERMSIG(child.status)));
  nlohmann::json j;
  try {
    const auto start = child.out.rfind("\n{");
    j = nlohmann::json::parse(start == std::string::npos ? child.out : child.out.substr(start + 1));
  } catch (const nlohmann::json::exception&) {
    const std::string said = last_line(child.err);
    return fail(said.empty() ? fmt::format("ping exited {} without a report", WEXITSTATUS(child.status)) : said);
  }
  bench::Repetition rep;
  auto samples = measurement::read_samples_le_u64(samples_path);
  if (q.samples_path.empty()) ::unlink(samples_path.c_str());
  if (!samples) return fail("cannot read ping's samples: " + samples.message());
  rep.samples_ns = std::move(*samples);
  rep.skipped_slots = j.value("skipped_slots", std::uint64_t{0});
  rep.lost = j.value("lost", std::uint64_t{0});
  rep.cpu_pct_ping = j["cpu_pct"].value("ping", 0.0);
  rep.cpu_pct_pong = j["cpu_pct"].value("pong", 0.0);
  rep.rss_ping = j["rss_bytes"].value("ping", std::uint64_t{0});
  rep.rss_pong = j["rss_bytes"].value("pong", std::uint64_t{0});
  const double slots = static_cast<double>(q.samples + rep.skipped_slots);
  rep.achieved_rate_hz = slots > 0 ? q.rate_hz * static_cast<double>(q.samples) / slots : 0;
  if (j.value("pong_gone", false)) return fail("the pong went away");
  if (rep.samples_ns.empty() && q.samples > 0) return fail("ping wrote no samples");
  return rep;
}

ProgressDisplay::ProgressDisplay() : tty_(::isatty(STDERR_FILENO)), started_(std::chrono::steady_clock::now()) {}

void ProgressDisplay::show(const bench::Progress& p) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double eta = p.done > 0 ? elapsed / static_cast<double>(p.done) * static_cast<double>(p.total - p.done) : 0;
  const std::string what = fmt::format("{} {} rep {}/{} at {:g} Hz", p.lane, bench::size_label(p.size), p.repetition,
                                       p.repetitions, p.rate_hz);
  if (tty_) {
    const int width = 24;
    const int filled = p.total ? static_cast<int>(width * p.done / p.total) : 0;
    fmt::print(stderr, "\r\033[K[{}{}] {}/{} {}  ETA {:.0f} s", std::string(filled, '#'), std::string(width - filled, '.'),
               p.done, p.total, what, eta);
    drew_ = true;
  } else {
    fmt::print(stderr, "bench: {}/{} {}{}\n", p.done + 1, p.total, what, p.done ? fmt::format(", ETA {:.0f} s", eta) : "");
  }
  std::fflush(stderr);
}

void ProgressDisplay::finish() {
  if (drew_) fmt::print(stderr, "\r\033[K");
}

}  // namespace cerulion::cli
