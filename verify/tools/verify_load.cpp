// SPDX-License-Identifier: Apache-2.0
// How long a verification takes (issue 42; figures in docs/performance.md): a recording of three
// inputs (1 kHz of 64 B, 100 Hz of 1 MiB, 30 Hz of JSON) for --seconds of log time, each input
// answered in the recording by one output on /answer, verified against a node (this program with
// --answer) that answers each input with that output. It says the whole run's time, and the time
// spent feeding (the lockstep publish of each input and the wait for its output) per input.
//
//   build/verify/verify-load [--seconds 60] [--only-small] [--keep-file]
//
// Payloads repeat a short pattern, so the recording compresses: it is the feeding that is timed,
// not the disk.

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/stop.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/wait_set.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/writer.hpp"
#include "cerulion/verify/report.hpp"
#include "cerulion/verify/verification.hpp"

using namespace cerulion;

namespace {

struct LoadStream {
  std::string topic;
  std::uint64_t period_ns;
  std::size_t size;  // 0: json
};

const std::vector<LoadStream> kAllStreams = {
    {"/load/small", 1'000'000, 64}, {"/load/large", 10'000'000, 1u << 20}, {"/load/json", 33'333'333, 0}};

// The answer to the n-th input of stream s: what the node publishes and the recording holds.
std::string answer_of(std::size_t s, std::uint64_t n) { return fmt::format("{{\"stream\":{},\"n\":{}}}", s, n); }

std::vector<std::byte> payload_of(const LoadStream& stream, std::uint64_t n) {
  if (stream.size == 0) {
    const std::string text = fmt::format("{{\"n\":{},\"pose\":{{\"x\":{},\"y\":{}}}}}", n, n * 0.5, n * 0.25);
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    return {p, p + text.size()};
  }
  std::vector<std::byte> data(stream.size);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>((n + i) & 0xff);
  return data;
}

// Writes the recording: inputs in log-time order, each followed by its answer.
std::uint64_t write_load_recording(const std::string& path, const std::vector<LoadStream>& streams, double seconds) {
  auto writer = recorder::Writer::create(path);
  if (!writer) throw std::runtime_error(writer.message());
  std::vector<std::uint16_t> channels;
  for (const auto& s : streams) {
    channels.push_back(*writer->add_channel(s.topic, s.size == 0 ? "json" : std::string(recorder::profile::kMessageEncoding)));
  }
  const std::uint16_t answers = *writer->add_channel("/answer", "json");
  const std::uint64_t start = 1'700'000'000'000'000'000ull;
  const auto end = start + static_cast<std::uint64_t>(seconds * 1e9);
  std::vector<std::uint64_t> next(streams.size(), start), counts(streams.size(), 0);
  std::uint64_t inputs = 0;
  for (;;) {
    std::size_t s = 0;
    for (std::size_t i = 1; i < streams.size(); ++i) s = next[i] < next[s] ? i : s;
    const std::uint64_t t = next[s];
    if (t >= end) break;
    const auto data = payload_of(streams[s], counts[s]);
    (void)writer->write(channels[s], static_cast<std::uint32_t>(counts[s]), t, t, data);
    const std::string answer = answer_of(s, counts[s]);
    (void)writer->write(answers, static_cast<std::uint32_t>(inputs), t, t, std::as_bytes(std::span(answer.data(), answer.size())));
    ++counts[s];
    ++inputs;
    next[s] += streams[s].period_ns;
  }
  if (Status st = writer->close(); !st) throw std::runtime_error(st.message());
  return inputs;
}

// The node: one answer per input, in the order they come.
int answer(const std::vector<LoadStream>& streams) {
  WaitOptions wait;
  wait.cancel = stop_on_signals();
  std::vector<Subscriber> subscribers;
  WaitSet set(wait);
  for (const auto& s : streams) {
    SubscriberOptions o;
    o.wait = wait;
    auto sub = Subscriber::create(s.topic, o);
    if (!sub) return std::fprintf(stderr, "verify-load: %s\n", sub.message().c_str()), 1;
    subscribers.push_back(std::move(*sub));
  }
  std::vector<std::size_t> keys;
  for (auto& sub : subscribers) keys.push_back(*set.add(sub));
  PublisherOptions o;
  o.topic.type = TopicType{"json", {}};
  o.wait = wait;
  auto pub = Publisher::create("/answer", o);
  if (!pub) return std::fprintf(stderr, "verify-load: %s\n", pub.message().c_str()), 1;
  std::vector<std::uint64_t> counts(streams.size(), 0);
  for (;;) {
    auto event = set.receive();
    if (!event) return event.code() == ErrorCode::Interrupted ? 0 : 1;
    std::size_t s = 0;
    while (keys[s] != event->key()) ++s;
    if (!pub->publish_text(answer_of(s, counts[s]++))) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  bool only_small = false, keep_file = false, answering = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::strtod(argv[++i], nullptr);
    } else if (a == "--only-small") {
      only_small = true;
    } else if (a == "--keep-file") {
      keep_file = true;
    } else if (a == "--answer") {
      answering = true;
    } else {
      std::fprintf(stderr, "usage: verify-load [--seconds S] [--only-small] [--keep-file]\n");
      return 2;
    }
  }
  const std::vector<LoadStream> streams = only_small ? std::vector<LoadStream>{kAllStreams[0]} : kAllStreams;
  if (answering) return answer(streams);

  const std::string path = (std::filesystem::temp_directory_path() / fmt::format("verify-load-{}.mcap", ::getpid())).string();
  const auto began = std::chrono::steady_clock::now();
  const std::uint64_t inputs = write_load_recording(path, streams, seconds);
  const double written_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  verify::VerifyOptions o;
  o.recording = path;
  o.run.command = {std::filesystem::read_symlink("/proc/self/exe").string(), "--answer"};
  if (only_small) o.run.command.push_back("--only-small");
  for (const auto& s : streams) o.run.inputs.push_back(s.topic);
  o.run.outputs = {"/answer"};
  o.run.cancel = stop_on_signals();
  const auto v = verify::verify(o);
  if (!keep_file) std::filesystem::remove(path);
  std::fputs(verify::text_report(v).c_str(), stdout);
  if (v.runs.empty()) return 1;
  const auto& r = v.runs.front();
  fmt::print("{} inputs ({} s of log time{}), recording written in {:.1f} s\n", inputs, seconds,
             only_small ? ", 1 kHz of 64 B only" : ": 1 kHz of 64 B, 100 Hz of 1 MiB, 30 Hz of json", written_s);
  fmt::print("verify: {:.2f} s in all, {:.2f} s feeding: {:.1f} us per input (lockstep publish and the wait for its answer)\n",
             static_cast<double>(r.elapsed_ns) / 1e9, static_cast<double>(r.feeding_ns) / 1e9,
             static_cast<double>(r.feeding_ns) / 1e3 / static_cast<double>(std::max<std::uint64_t>(r.inputs, 1)));
  return v.verdict == verify::Verdict::Same ? 0 : 1;
}
