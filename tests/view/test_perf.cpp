// SPDX-License-Identifier: Apache-2.0
// Figures for docs/performance.md, not run by default (hidden tag [.perf]): they assert nothing
// about time, they print it. Run alone, on a machine as quiet as can be had:
//   CERULION_BIN=build/cerulion build/tests/view/view_tests "[.perf]" -s

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "view_helpers.hpp"

using namespace viewtest;

namespace {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

std::uint64_t realtime_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A client that subscribes to every channel advertised and reads until told to stop.
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
  ~DrainingClient() { thread.join(); }
  std::atomic<std::uint64_t> messages{0};
  std::thread thread;
};

double ping_median_us(const std::string& domain, const std::string& size) {
  const auto r = test::run_cerulion({"--domain", domain, "ping", "-s", size, "-c", "2000", "--json"}, {},
                                    std::chrono::seconds(120));
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out)["rtt_us"]["median"].get<double>();
}

}  // namespace

TEST_CASE("Figures: ping's median with and without a view serving two clients the ping topics", "[.perf][view]") {
  for (const char* size : {"64", "1MiB"}) {
    std::vector<double> without, with;
    for (int round = 0; round < 3; ++round) {
      const std::string domain = test::unique_domain("viewping");
      without.push_back(ping_median_us(domain, size));
      LiveServer live({}, domain);
      std::atomic<bool> stop{false};
      std::uint64_t delivered = 0;
      {
        DrainingClient a(live.port(), stop), b(live.port(), stop);
        with.push_back(ping_median_us(domain, size));
        stop = true;
        delivered = a.messages + b.messages;
      }
      CHECK(delivered > 0);
    }
    WARN("ping " << size << " median RTT us, without view: " << without[0] << " " << without[1] << " " << without[2]
                 << "; with view + 2 clients: " << with[0] << " " << with[1] << " " << with[2] << "; ratio of medians "
                 << percentile(with, 0.5) / percentile(without, 0.5));
  }
}

TEST_CASE("Figures: latency from publish to a client's receive on loopback", "[.perf][view]") {
  for (const auto readers : {recording::Readers::Pooled, recording::Readers::PerTopic})
  for (std::size_t size : {std::size_t{64}, std::size_t{1} << 20}) {
    view::ViewOptions options;
    options.taps.readers = readers;
    LiveServer live(options);
    const std::string topic = test::unique_topic("latency");
    auto pub = live.publisher(topic);
    std::string payload(size, 'x');
    REQUIRE(pub.publish_text(payload).ok());
    test::WsClient client(live.port());
    const auto channel = channel_of(client, topic);
    REQUIRE_FALSE(channel.is_null());
    subscribe(client, 1, channel["id"]);
    REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 1; }));
    std::vector<double> us;
    for (int i = 0; i < 1100; ++i) {
      const std::uint64_t sent = realtime_now_ns();
      std::memcpy(payload.data(), &sent, sizeof sent);
      REQUIRE(pub.publish_text(payload).ok());
      auto frame = next_binary(client);
      const std::uint64_t received = realtime_now_ns();
      REQUIRE(frame);
      std::uint64_t stamp = 0;
      std::memcpy(&stamp, frame->data() + 13, sizeof stamp);
      REQUIRE(stamp == sent);
      if (i >= 100) us.push_back(static_cast<double>(received - sent) / 1e3);
      std::this_thread::sleep_for(std::chrono::milliseconds(size > 4096 ? 10 : 2));
    }
    WARN((readers == recording::Readers::Pooled ? "pooled readers" : "a reader per topic")
         << ": publish -> client receive, " << size << " B, " << us.size() << " messages: median " << percentile(us, 0.5)
                                       << " us, p99 " << percentile(us, 0.99) << " us");
  }
}
