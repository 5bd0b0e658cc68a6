// SPDX-License-Identifier: Apache-2.0
#include "local_readers.hpp"

#include <chrono>

#include "cerulion/core/discovery.hpp"

namespace cerulion::bridge::detail {

namespace {
/// How long a reader waits before looking at the stop flag again (a stop also cancels the wait).
constexpr auto kReceiveSlice = std::chrono::milliseconds(200);
/// How often discovery looks again when it cannot watch the domain's directory.
constexpr auto kDiscoveryPoll = std::chrono::milliseconds(200);
}  // namespace

void LocalReaders::problem(std::string line) {
  std::lock_guard lock(mutex_);
  problems_.push_back(std::move(line));
}

Status LocalReaders::open(const std::string& topic) {
  SubscriberOptions o;
  o.role = lockstep_ ? Role::Subscriber : Role::Tap;
  o.topic.domain = domain_;
  o.wait.cancel = &stop_;
  auto sub = Subscriber::create(topic, o);
  std::lock_guard lock(mutex_);
  tried_.insert(topic);
  if (!sub) return Status(sub.code(), "'" + topic + "': " + sub.message());
  auto r = std::make_unique<Reader>();
  r->index = readers_.size();
  r->topic = sub->topic();
  r->subscriber = std::make_unique<Subscriber>(std::move(*sub));
  Reader& ref = *r;
  readers_.push_back(std::move(r));
  if (started_) ref.thread = std::thread([this, &ref] { read(ref); });
  return {};
}

Status LocalReaders::open_named() {
  for (const auto& t : named_) {
    auto name = normalize_topic_name(t);
    if (!name) return Status(name.code(), "'" + t + "': " + name.message());
    {
      std::lock_guard lock(mutex_);
      if (tried_.count(*name)) continue;
    }
    if (Status st = open(*name); !st.ok()) return st;
  }
  return {};
}

void LocalReaders::start() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  started_ = true;
  for (auto& r : readers_) r->thread = std::thread([this, ref = r.get()] { read(*ref); });
  discovery_ = std::thread([this] { discover(); });
}

void LocalReaders::stop() {
  stop_.store(true);
  if (discovery_.joinable()) discovery_.join();
  std::vector<std::thread> threads;  // joined outside the lock: a reader may be saying a problem
  {
    std::lock_guard lock(mutex_);
    for (auto& r : readers_) threads.push_back(std::move(r->thread));
  }
  for (auto& t : threads)
    if (t.joinable()) t.join();
}

void LocalReaders::read(Reader& r) {
  bool described = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    auto got = r.subscriber->receive(kReceiveSlice);
    if (!got) {
      if (got.code() == ErrorCode::Timeout) continue;
      if (got.code() == ErrorCode::Interrupted) return;
      problem(r.topic + ": cannot read: " + got.message());
      return;
    }
    if (!described) {
      recording::TopicDescription d;
      d.index = r.index;
      d.topic = r.topic;
      d.domain = domain_;
      d.mode = r.subscriber->mode();
      auto type = r.subscriber->type();
      if (type) d.type = *type;
      sink_.on_topic(d);
      described = true;
    }
    r.missed.fetch_add(got->lost_before(), std::memory_order_relaxed);
    recording::TappedSample s;
    s.topic_index = r.index;
    s.sequence = got->sequence();
    s.publish_time = got->publish_realtime_ns();
    s.log_time = realtime_ns();
    s.publisher_pid = got->publisher_pid();
    s.lost_before = got->lost_before();
    s.data = got->data();
    if (sink_.on_sample(s)) r.received.fetch_add(1, std::memory_order_relaxed);
    else r.dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void LocalReaders::discover() {
  auto watch = TopicWatch::create(domain_);
  while (!stop_.load(std::memory_order_relaxed)) {
    auto listing = list_topics(domain_);
    if (listing) {
      for (const auto& t : listing->topics) {
        {
          std::lock_guard lock(mutex_);
          if (tried_.count(t.name)) continue;
        }
        if (!selection_.selected(t.name)) continue;
        if (Status st = open(t.name); !st.ok()) problem(t.name + ": cannot export: " + st.message());
      }
    }
    if (watch) {
      (void)watch->wait(kDiscoveryPoll);
    } else {
      std::this_thread::sleep_for(kDiscoveryPoll);
    }
  }
}

std::vector<recording::TopicCounts> LocalReaders::counts() const {
  std::vector<recording::TopicCounts> out;
  std::lock_guard lock(mutex_);
  for (const auto& r : readers_) out.push_back({r->topic, r->received.load(), r->missed.load(), r->dropped.load()});
  return out;
}

std::vector<std::string> LocalReaders::problems() const {
  std::lock_guard lock(mutex_);
  return problems_;
}

}  // namespace cerulion::bridge::detail
