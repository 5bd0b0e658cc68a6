// SPDX-License-Identifier: Apache-2.0
// The view's figures for docs/performance.md: a developer's tool, not installed, asserting nothing.
//   view-figures [latency|camera|ping|all] [--cerulion PATH] [--rounds N] [--count N] [--default-only]
// latency: publish -> client receive on loopback, 64 B and 1 MiB, with each setup of the view's
//   readers: pooled (the default), a thread per topic polling where the next message is due, a
//   thread per topic that does not poll.
// camera: a 1920x1080 RGB topic at 30 Hz beside a 1 kHz 64 B topic, to one client; rounds with and
//   without the camera alternate, so the machine's load falls on both alike.
// ping: `cerulion ping -c COUNT` without a view and with one (of each reader setup, or the default
//   only) serving two clients subscribed to the ping topics, arms in turn in each round (the order
//   reversed every other round); each arm's medians per round and of all its round trips pooled,
//   and the ratios to the arm without a view.
// The client is the view tests' Beast client (tests/view/ws_client.*).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/view/server.hpp"
#include "ws_client.hpp"

namespace {

using namespace cerulion;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "view-figures: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T take(Result<T> r, const std::string& what) {
  if (!r) fail(what + ": " + r.message());
  return std::move(*r);
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

std::uint64_t u64_at(const std::string& bytes, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

std::string fresh_domain(const std::string& stem) {
  static int counter = 0;
  return "viewfig_" + stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

/// Leaves no segment of the tool's domain behind (every participant is gone by then).
void clean(const std::string& domain) { (void)clean_domain(domain, false); }

Publisher publisher_in(const std::string& domain, const std::string& topic) {
  PublisherOptions o;
  o.topic.domain = domain;
  return take(Publisher::create(topic, o), "cannot publish '" + topic + "'");
}

view::ViewServer serve(const std::string& domain, view::ViewOptions options = {}) {
  options.taps.domain = domain;
  options.port = 0;
  auto server = take(view::ViewServer::create(std::move(options)), "cannot create the view");
  if (Status st = server.start(); !st) fail("cannot start the view: " + st.message());
  return server;
}

void subscribe(test::WsClient& client, std::uint32_t id, std::uint32_t channel) {
  client.send_text(json{{"op", "subscribe"}, {"subscriptions", {{{"id", id}, {"channelId", channel}}}}}.dump());
}

/// Subscribes to channels as they are advertised until `topics` are (subscription id -> topic).
std::map<std::uint32_t, std::string> subscribe_to(test::WsClient& client, std::size_t topics) {
  std::map<std::uint32_t, std::string> by_subscription;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (by_subscription.size() < topics && Clock::now() < deadline) {
    auto frame = client.read(std::chrono::milliseconds(200));
    if (!frame || !frame->text) continue;
    const auto j = json::parse(frame->data);
    if (j["op"] != "advertise") continue;
    for (const auto& c : j["channels"]) {
      const auto id = static_cast<std::uint32_t>(by_subscription.size() + 1);
      by_subscription[id] = c["topic"];
      subscribe(client, id, c["id"]);
    }
  }
  if (by_subscription.size() < topics) fail("the view did not advertise the topics");
  return by_subscription;
}

void wait_for_subscriptions(const view::ViewServer& server, std::size_t count) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (server.counts().subscriptions < count) {
    if (Clock::now() > deadline) fail("the view did not take the subscriptions");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// A payload whose first 8 bytes are the realtime publish time, for the client to subtract.
void stamp(std::span<std::byte> payload) {
  const std::uint64_t sent = realtime_ns();
  std::memcpy(payload.data(), &sent, sizeof sent);
}

// ---- latency -------------------------------------------------------------------------------

struct ReaderSetup {
  const char* name;
  recording::Readers readers;
  bool poll_when_due;
};

/// The view's default first; the others to set beside it.
const std::vector<ReaderSetup>& reader_setups() {
  static const std::vector<ReaderSetup> setups = {
      {"pooled (the view's default)", recording::Readers::Pooled, false},
      {"per topic, polling when due", recording::Readers::PerTopic, true},
      {"per topic, not polling", recording::Readers::PerTopic, false},
  };
  return setups;
}

view::ViewOptions options_of(const ReaderSetup& setup) {
  view::ViewOptions options;
  options.taps.readers = setup.readers;
  options.taps.poll_when_due = setup.poll_when_due;
  return options;
}

void latency_once(const ReaderSetup& setup, std::size_t size) {
  const std::string domain = fresh_domain("latency");
  {
    auto server = serve(domain, options_of(setup));
    auto pub = publisher_in(domain, "/latency");
    std::vector<std::byte> payload(size);
    stamp(payload);
    (void)take(pub.publish_copy(payload), "cannot publish");
    test::WsClient client(server.port());
    (void)subscribe_to(client, 1);
    wait_for_subscriptions(server, 1);
    // The publisher keeps its own grid, as a robot's topics do, whatever the client sees.
    constexpr int kMessages = 1100, kWarmUp = 100;
    const auto period = std::chrono::milliseconds(size > 4096 ? 10 : 2);
    std::thread publishing([&] {
      auto next = Clock::now();
      for (int i = 0; i < kMessages; ++i) {
        next += period;
        std::this_thread::sleep_until(next);
        stamp(payload);
        (void)pub.publish_copy(payload);
      }
    });
    std::vector<double> to_client, to_tap;
    int frames = 0;
    while (frames < kMessages) {
      auto frame = client.read(std::chrono::seconds(5));
      const std::uint64_t received = realtime_ns();
      if (!frame) break;
      if (frame->text) continue;
      // A message frame: op (1), subscription (4), the tap's receive time (8), the payload.
      const std::uint64_t sent = u64_at(frame->data, 13), tapped = u64_at(frame->data, 5);
      if (frames++ < kWarmUp) continue;
      to_client.push_back(static_cast<double>(received - sent) / 1e3);
      to_tap.push_back(static_cast<double>(tapped - sent) / 1e3);
    }
    publishing.join();
    std::printf("latency %-28s %8zu B: %4zu messages (of %d), publish -> client median %8.1f us p99 %8.1f us;"
                " publish -> tap median %8.1f us p99 %8.1f us\n",
                setup.name, size, to_client.size(), kMessages - kWarmUp, percentile(to_client, 0.5),
                percentile(to_client, 0.99), percentile(to_tap, 0.5), percentile(to_tap, 0.99));
    std::fflush(stdout);
  }
  clean(domain);
}

void latency() {
  for (std::size_t size : {std::size_t{64}, std::size_t{1} << 20}) {
    for (const auto& setup : reader_setups()) latency_once(setup, size);
  }
}

// ---- camera + 1 kHz ------------------------------------------------------------------------

struct MixedRun {
  double small_rate_hz = 0;
  double camera_rate_hz = 0;
  double camera_published_hz = 0;
  std::vector<double> small_us;  ///< publish -> client, per message of the small topic
};

MixedRun run_mixed(bool with_camera, std::chrono::seconds length) {
  const std::string domain = fresh_domain("camera");
  MixedRun run;
  {
    auto server = serve(domain);
    auto small = publisher_in(domain, "/imu");
    std::vector<std::byte> small_payload(64);
    (void)take(small.publish_copy(small_payload), "cannot publish");
    constexpr std::size_t kFrameBytes = 1920 * 1080 * 3;
    std::optional<Publisher> camera;
    if (with_camera) {
      camera.emplace(publisher_in(domain, "/camera"));
      (void)take(camera->publish_copy(std::vector<std::byte>(kFrameBytes)), "cannot publish");
    }
    test::WsClient client(server.port());
    auto by_subscription = subscribe_to(client, with_camera ? 2 : 1);
    wait_for_subscriptions(server, by_subscription.size());

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> camera_published{0};
    std::thread small_publishing([&] {
      for (auto next = Clock::now(); !stop;) {
        next += std::chrono::milliseconds(1);
        std::this_thread::sleep_until(next);
        stamp(small_payload);
        (void)small.publish_copy(small_payload);
      }
    });
    std::thread camera_publishing([&] {
      if (!camera) return;
      for (auto next = Clock::now(); !stop;) {
        next += std::chrono::microseconds(33'333);
        std::this_thread::sleep_until(next);
        auto loan = camera->loan(kFrameBytes);
        if (!loan) continue;
        std::memset(loan->data().data(), 0x5a, kFrameBytes);  // a camera writes every byte of a frame
        if (camera->publish(std::move(*loan))) ++camera_published;
      }
    });
    // A second of warm-up, then the run.
    std::uint64_t small_count = 0, camera_frames = 0, published_at_start = 0;
    bool started = false;
    const auto start = Clock::now() + std::chrono::seconds(1), end = start + length;
    for (auto now = Clock::now(); now < end; now = Clock::now()) {
      auto frame = client.read(std::chrono::milliseconds(100));
      const std::uint64_t received = realtime_ns();
      if (!started && now >= start) {
        started = true;
        published_at_start = camera_published;
      }
      if (!frame || frame->text || now < start) continue;
      if (by_subscription[u32_at(frame->data, 1)] == "/camera") {
        ++camera_frames;
        continue;
      }
      ++small_count;
      run.small_us.push_back(static_cast<double>(received - u64_at(frame->data, 13)) / 1e3);
    }
    const double seconds = std::chrono::duration<double>(length).count();
    run.camera_published_hz = static_cast<double>(camera_published - published_at_start) / seconds;
    stop = true;
    small_publishing.join();
    camera_publishing.join();
    run.small_rate_hz = static_cast<double>(small_count) / seconds;
    run.camera_rate_hz = static_cast<double>(camera_frames) / seconds;
  }
  clean(domain);
  return run;
}

void camera(int rounds) {
  for (int round = 0; round < rounds; ++round) {
    for (const bool with_camera : {false, true}) {
      const MixedRun run = run_mixed(with_camera, std::chrono::seconds(5));
      std::printf("camera round %d %-16s: 1 kHz 64 B topic %7.1f msg/s at the client, publish -> client median %7.1f us"
                  " p99 %8.1f us; camera %5.1f frames/s at the client (%5.1f published)\n",
                  round, with_camera ? "with the camera" : "without it", run.small_rate_hz,
                  percentile(run.small_us, 0.5), percentile(run.small_us, 0.99), run.camera_rate_hz,
                  run.camera_published_hz);
      std::fflush(stdout);
    }
  }
}

// ---- ping with and without a view ----------------------------------------------------------

/// A client that subscribes to every channel advertised and reads until told to stop.
struct DrainingClient {
  DrainingClient(std::uint16_t port, std::atomic<bool>& stop) {
    thread = std::thread([this, port, &stop] {
      test::WsClient client(port);
      std::uint32_t next_id = 1;
      while (!stop.load()) {
        auto frame = client.read(std::chrono::milliseconds(100));
        if (!frame) continue;
        if (!frame->text) {
          ++messages;
          continue;
        }
        const auto j = json::parse(frame->data);
        if (j["op"] != "advertise") continue;
        for (const auto& c : j["channels"]) subscribe(client, next_id++, c["id"]);
      }
    });
  }
  ~DrainingClient() {
    if (thread.joinable()) thread.join();
  }
  /// After the stop flag is set: the messages it read.
  std::uint64_t finish() {
    thread.join();
    return messages;
  }
  std::atomic<std::uint64_t> messages{0};
  std::thread thread;
};

/// One `cerulion ping` run: its round trips, in ns.
std::vector<double> ping_samples(const std::string& cerulion, const std::string& domain, const std::string& size,
                                 int count) {
  const std::string file = "/tmp/view-figures-" + std::to_string(getpid()) + ".u64";
  // A long warm-up: the clients subscribe to the ping topics when the view advertises them,
  // within its first tick, before the measured round trips start.
  measurement::ChildOptions ping;
  ping.argv = {cerulion, "--domain", domain, "ping", "-s", size, "-c", std::to_string(count), "--warmup", "300", "--json",
               "--samples-out", file};
  ping.out = measurement::Stream::Null;
  ping.err = measurement::Stream::Null;
  auto started = measurement::ChildProcess::start(ping);
  if (!started) fail(started.message());
  if (const auto ended = started->wait(); ended.exit_code != 0) {
    fail("cerulion ping -s " + size + " failed (exit " + std::to_string(ended.exit_code) + ")");
  }
  std::vector<double> samples;
  if (FILE* in = std::fopen(file.c_str(), "rb")) {
    std::uint64_t ns = 0;
    while (std::fread(&ns, sizeof ns, 1, in) == 1) samples.push_back(static_cast<double>(ns));
    std::fclose(in);
  }
  std::remove(file.c_str());
  if (samples.empty()) fail("cerulion ping -s " + size + " wrote no round trips");
  return samples;
}

struct PingArm {
  std::vector<double> medians_us;             ///< per round
  std::vector<std::vector<double>> rounds_ns;  ///< every round trip, by round
  std::uint64_t delivered = 0;                ///< messages the view's clients read
};

/// The median of the round trips of the chosen rounds.
double pooled_median(const PingArm& arm, const std::vector<std::size_t>& rounds) {
  std::vector<double> values;
  for (std::size_t r : rounds) values.insert(values.end(), arm.rounds_ns[r].begin(), arm.rounds_ns[r].end());
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

/// How far the ratio of pooled medians would move with other rounds: rounds drawn again with
/// replacement (the same draw for both arms, as rounds are pairs taken together), the 5th and 95th
/// percentiles of the ratio over 500 draws.
std::pair<double, double> ratio_interval(const PingArm& with, const PingArm& without) {
  std::mt19937 random(12345);
  std::uniform_int_distribution<std::size_t> pick(0, with.rounds_ns.size() - 1);
  std::vector<double> ratios;
  for (int draw = 0; draw < 500; ++draw) {
    std::vector<std::size_t> rounds(with.rounds_ns.size());
    for (auto& r : rounds) r = pick(random);
    ratios.push_back(pooled_median(with, rounds) / pooled_median(without, rounds));
  }
  return {percentile(ratios, 0.05), percentile(ratios, 0.95)};
}

/// Every round trip of every round of an arm.
std::vector<double> every_round_trip(const PingArm& arm) {
  std::vector<double> all;
  for (const auto& round : arm.rounds_ns) all.insert(all.end(), round.begin(), round.end());
  return all;
}

void print_arm(const char* size, const std::string& name, const PingArm& arm, const PingArm* without) {
  const std::vector<double> all = every_round_trip(arm);
  std::printf("ping %-4s %-32s medians", size, name.c_str());
  for (double v : arm.medians_us) std::printf(" %.2f", v);
  std::printf(" us; pooled median %.2f us, p90 %.2f us", percentile(all, 0.5) / 1e3, percentile(all, 0.9) / 1e3);
  if (without != nullptr) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < arm.medians_us.size(); ++i) ratios.push_back(arm.medians_us[i] / without->medians_us[i]);
    const auto [low, high] = ratio_interval(arm, *without);
    std::printf("; ratio of pooled medians %.3f (rounds redrawn: 90 %% within %.3f-%.3f), median of the rounds' "
                "ratios %.3f (%.2f-%.2f), %llu messages to the clients",
                percentile(all, 0.5) / percentile(every_round_trip(*without), 0.5), low, high, percentile(ratios, 0.5),
                *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                static_cast<unsigned long long>(arm.delivered));
  }
  std::printf("\n");
}

void ping(const std::string& cerulion, int rounds, int count, bool default_only) {
  const auto& all_setups = reader_setups();
  const std::vector<ReaderSetup> setups(all_setups.begin(), default_only ? all_setups.begin() + 1 : all_setups.end());
  for (const char* size : {"64", "1MiB"}) {
    PingArm without;
    std::vector<PingArm> with(setups.size());
    for (int round = 0; round < rounds; ++round) {
      // Arms in turn, the order reversed every other round, so drift in the machine's load falls
      // on all of them alike.
      std::vector<std::size_t> order(setups.size() + 1);
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      if (round % 2 == 1) std::reverse(order.begin(), order.end());
      for (std::size_t arm : order) {
        const std::string domain = fresh_domain("ping");
        std::vector<double> samples;
        PingArm& into = arm == 0 ? without : with[arm - 1];
        if (arm == 0) {
          samples = ping_samples(cerulion, domain, size, count);
        } else {
          auto server = serve(domain, options_of(setups[arm - 1]));
          std::atomic<bool> stop{false};
          DrainingClient a(server.port(), stop), b(server.port(), stop);
          samples = ping_samples(cerulion, domain, size, count);
          stop = true;
          into.delivered += a.finish() + b.finish();
        }
        into.medians_us.push_back(percentile(samples, 0.5) / 1e3);
        into.rounds_ns.push_back(std::move(samples));
        clean(domain);
      }
    }
    print_arm(size, "without a view", without, nullptr);
    for (std::size_t i = 0; i < setups.size(); ++i) {
      print_arm(size, std::string("view (") + setups[i].name + "), 2 clients", with[i], &without);
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = "all", cerulion = "cerulion";
  if (const char* bin = std::getenv("CERULION_BIN")) cerulion = bin;
  int rounds = 3, count = 2000;
  bool default_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cerulion" && i + 1 < argc) {
      cerulion = argv[++i];
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--count" && i + 1 < argc) {
      count = std::max(100, std::atoi(argv[++i]));
    } else if (arg == "--default-only") {
      default_only = true;
    } else if (arg == "latency" || arg == "camera" || arg == "ping" || arg == "all") {
      what = arg;
    } else {
      std::fprintf(stderr, "usage: view-figures [latency|camera|ping|all] [--cerulion PATH] [--rounds N] [--count N] [--default-only]\n");
      return 2;
    }
  }
  try {
    if (what == "latency" || what == "all") latency();
    if (what == "camera" || what == "all") camera(std::max(1, rounds - 1));
    if (what == "ping" || what == "all") ping(cerulion, rounds, count, default_only);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
