// SPDX-License-Identifier: Apache-2.0
// Throughput figures for the notes, not a test of behaviour: hidden ([.bench]), run by hand with
//   ./build-cli/tests/cli/cli_tests "[.bench]"
// 64-byte messages, lockstep, spin-waiting publisher and subscriber.

#include <chrono>
#include <cstring>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fmt/core.h>

#include "cerulion/core.hpp"
#include "process.hpp"

namespace {

constexpr std::uint64_t kMessages = 1'000'000;
constexpr std::size_t kPayload = 64;

cerulion::SubscriberOptions spin_subscriber() {
  cerulion::SubscriberOptions options;
  options.wait.strategy = cerulion::WaitStrategy::Spin;
  return options;
}

/// Receives kMessages and returns how many carried the expected counter.
std::uint64_t receive_all(cerulion::Subscriber& subscriber) {
  std::uint64_t in_order = 0;
  for (std::uint64_t i = 0; i < kMessages; ++i) {
    auto sample = subscriber.receive(std::chrono::seconds(30));
    if (!sample) break;
    std::uint64_t counter = 0;
    std::memcpy(&counter, sample->data().data(), sizeof counter);
    if (counter == i) ++in_order;
  }
  return in_order;
}

/// Publishes kMessages carrying their counter; returns how many were published.
std::uint64_t publish_all(cerulion::Publisher& publisher) {
  std::uint64_t published = 0;  // counted, not REQUIREd per message: assertions would dominate
  for (std::uint64_t i = 0; i < kMessages; ++i) {
    auto loan = publisher.loan(kPayload);
    if (!loan) break;
    std::memcpy(loan->data().data(), &i, sizeof i);
    if (!publisher.publish(std::move(*loan))) break;
    ++published;
  }
  return published;
}

cerulion::Publisher spin_publisher(const std::string& topic) {
  cerulion::PublisherOptions options;
  options.wait.strategy = cerulion::WaitStrategy::Spin;
  auto publisher = cerulion::Publisher::create(topic, options);
  REQUIRE(publisher);
  return std::move(publisher).value();
}

}  // namespace

TEST_CASE("API throughput in one process", "[.bench]") {
  const std::string topic = cerulion::test::unique_topic("bench_threads");
  auto subscriber = cerulion::Subscriber::create(topic, spin_subscriber());
  REQUIRE(subscriber);
  auto publisher = spin_publisher(topic);
  std::uint64_t in_order = 0;
  auto start = std::chrono::steady_clock::now();
  std::thread reader([&] { in_order = receive_all(*subscriber); });
  CHECK(publish_all(publisher) == kMessages);
  reader.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(in_order == kMessages);
  fmt::print("C++ API, one process (2 threads), spin, lockstep, {} B: {:.0f} msg/s\n", kPayload, kMessages / seconds);
}

TEST_CASE("API throughput across two processes", "[.bench]") {
  const std::string topic = cerulion::test::unique_topic("bench_processes");
  pid_t child = fork();
  if (child == 0) {
    auto subscriber = cerulion::Subscriber::create(topic, spin_subscriber());
    _exit(subscriber && receive_all(*subscriber) == kMessages ? 0 : 1);
  }
  auto publisher = spin_publisher(topic);
  REQUIRE(publisher.wait_for_subscribers(1, std::chrono::seconds(10)));
  auto start = std::chrono::steady_clock::now();
  CHECK(publish_all(publisher) == kMessages);
  int status = 0;
  waitpid(child, &status, 0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  fmt::print("C++ API, two processes, spin, lockstep, {} B: {:.0f} msg/s\n", kPayload, kMessages / seconds);
}
