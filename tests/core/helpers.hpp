// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small conveniences for the core tests.

#include <catch2/catch.hpp>

#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string>
#include <vector>

#include "bytes.hpp"
#include "cerulion/core.hpp"

namespace cerulion::test {

inline std::string text_of(const Sample& sample) {
  return {reinterpret_cast<const char*>(sample.data().data()), sample.size()};
}

inline PublisherOptions publisher_options(Mode mode, std::optional<std::uint32_t> depth = 4,
                                          WaitStrategy wait = WaitStrategy::Adaptive) {
  PublisherOptions o;
  o.topic.mode = mode;
  o.topic.depth = depth;
  o.wait.strategy = wait;
  return o;
}

inline SubscriberOptions subscriber_options(Role role = Role::Subscriber,
                                            WaitStrategy wait = WaitStrategy::Adaptive) {
  SubscriberOptions o;
  o.role = role;
  o.wait.strategy = wait;
  return o;
}

inline WaitOptions wait_options(WaitStrategy strategy, const std::atomic<bool>* cancel = nullptr) {
  WaitOptions o;
  o.strategy = strategy;
  o.cancel = cancel;
  return o;
}

/// Path of a topic's segment file.
inline std::string shm_path(const std::string& topic, const std::string& domain = default_domain()) {
  return "/dev/shm" + segment_name(domain, topic);
}

inline bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// Overwrites `bytes` at `offset` of a topic's segment.
inline void scribble(const std::string& topic, std::size_t offset, const std::string& bytes) {
  int fd = ::open(shm_path(topic).c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}


}  // namespace cerulion::test
