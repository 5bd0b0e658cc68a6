#pragma once
// Small conveniences for the core tests.

#include <cstring>
#include <string>
#include <vector>

#include "cerulion/core.hpp"

namespace cerulion::test {

inline std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

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

}  // namespace cerulion::test
