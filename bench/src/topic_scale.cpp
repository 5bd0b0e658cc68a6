// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/topic_scale.hpp"

#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"

namespace cerulion::bench {
namespace {

/// A "Key:  N kB" line of /proc/self/status, in bytes.
std::uint64_t status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t key_length = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, key_length, key) == 0 && line.size() > key_length && line[key_length] == ':') {
      return std::stoull(line.substr(key_length + 1)) * 1024;
    }
  }
  return 0;
}

std::uint64_t count_lines(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::uint64_t n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

std::uint64_t count_entries(const char* path) {
  DIR* dir = ::opendir(path);
  if (dir == nullptr) return 0;
  std::uint64_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
  }
  ::closedir(dir);
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<TopicScaleReport> measure_topic_scale(const TopicScaleOptions& options) {
  if (options.topics == 0) return Status(ErrorCode::InvalidArgument, "topic count must be at least 1");
  if (options.payload > options.max_payload) {
    return Status(ErrorCode::InvalidArgument, "the payload is over the topics' ceiling");
  }
  const std::string domain = options.domain.empty() ? "scale" + std::to_string(::getpid()) : options.domain;
  TopicScaleReport report;
  report.topics = options.topics;
  report.address_space_before = status_bytes("VmSize");
  report.resident_before = status_bytes("VmRSS");
  report.mappings_before = count_lines("/proc/self/maps");
  report.descriptors_before = count_entries("/proc/self/fd");

  std::vector<Publisher> publishers;
  std::vector<Subscriber> subscribers;
  publishers.reserve(options.topics);
  subscribers.reserve(options.topics);
  const auto attach_start = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < options.topics; ++i) {
    const std::string topic = "/scale/" + std::to_string(i);
    PublisherOptions po;
    po.topic.domain = domain;
    po.topic.max_payload = options.max_payload;
    auto pub = Publisher::create(topic, po);
    if (!pub) return Status(pub.code(), "topic " + std::to_string(i + 1) + " of " + std::to_string(options.topics) + ": " + pub.message());
    SubscriberOptions so;
    so.topic.domain = domain;
    so.topic.max_payload = options.max_payload;
    auto sub = Subscriber::create(topic, so);
    if (!sub) return Status(sub.code(), "topic " + std::to_string(i + 1) + " of " + std::to_string(options.topics) + ": " + sub.message());
    publishers.push_back(std::move(*pub));
    subscribers.push_back(std::move(*sub));
  }
  report.attach_seconds = seconds_since(attach_start);

  std::vector<std::byte> message(options.payload);
  const auto round_start = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < options.topics; ++i) {
    for (std::size_t b = 0; b < message.size(); ++b) message[b] = static_cast<std::byte>((b + i) & 0xff);
    if (auto sent = publishers[i].publish_copy(message, std::chrono::seconds(1)); !sent) return sent.status();
    auto got = subscribers[i].receive(std::chrono::seconds(1));
    if (!got) return got.status();
    if (got->size() == message.size() && std::memcmp(got->data().data(), message.data(), message.size()) == 0) {
      ++report.intact;
    }
  }
  report.round_seconds = seconds_since(round_start);

  report.address_space_after = status_bytes("VmSize");
  report.resident_after = status_bytes("VmRSS");
  report.mappings_after = count_lines("/proc/self/maps");
  report.descriptors_after = count_entries("/proc/self/fd");
  auto topics = list_topics(domain);
  if (topics) {
    for (const TopicInfo& t : topics->topics) report.shm_committed += t.resident_bytes;
  }
  return report;
}

}  // namespace cerulion::bench
