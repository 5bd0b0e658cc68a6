// SPDX-License-Identifier: Apache-2.0
// TapSet: opening topics (named ones at create(), discovered ones as they appear) and the public
// API. The reader threads are in tap_readers.cpp.

#include <algorithm>
#include <chrono>

#include "cerulion/core/names.hpp"
#include "tap_set_impl.hpp"

namespace cerulion::recording {
namespace detail {

TapSetImpl::TapSetImpl(TapSetOptions options, TopicMatcher matcher, SampleSink& sink)
    : options_(std::move(options)), sink_(sink), matcher_(std::move(matcher)), created_realtime_ns_(realtime_ns()) {
  if (options_.threads == 0) options_.threads = 1;
}

Status TapSetImpl::open(const std::string& topic, StartAt start) {
  {
    std::lock_guard lock(mutex_);
    if (open_names_.count(topic)) return {};
  }
  SubscriberOptions o;
  o.role = options_.lockstep ? Role::Subscriber : Role::Tap;
  o.start = start;
  o.topic.domain = options_.domain;
  o.wait.cancel = &stop_;
  o.wait.strategy = options_.wait;
  o.poll_when_due = options_.poll_when_due && !options_.lockstep;
  auto subscriber = Subscriber::create(topic, o);
  if (!subscriber) return Status(subscriber.code(), "'" + topic + "': " + subscriber.message());
  TopicDescription d;
  d.topic = subscriber->topic();
  d.domain = options_.domain;
  d.mode = subscriber->mode();
  if (auto info = inspect_topic(d.topic, options_.domain); info.ok()) {
    d.depth = info->depth;
    d.max_payload = info->max_payload;
  }
  std::lock_guard lock(mutex_);
  d.index = taps_.size();
  taps_.push_back(std::make_unique<Tap>(std::move(subscriber.value()), d.index));
  descriptions_.push_back(d);
  open_names_.insert(d.topic);
  tap_count_.store(taps_.size(), std::memory_order_release);
  if (started_ && options_.readers == Readers::PerTopic) start_topic_reader(*taps_.back());
  return {};
}

void TapSetImpl::report(EventKind kind, const std::string& subject, const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (!said_.insert(subject + '\n' + message).second) return;
  }
  recording::report(options_.events, kind, subject, message);
}

void TapSetImpl::discover() {
  auto listing = list_topics(options_.domain);
  if (!listing) {
    report(EventKind::Problem, "", "cannot list the domain's topics: " + listing.message());
    return;
  }
  for (const auto& info : listing->topics) {
    if (!matcher_.matches(info.name)) continue;
    const StartAt start = info.created_realtime_ns >= created_realtime_ns_ ? StartAt::First : options_.start;
    // Retried at every listing (what failed may open later); said once.
    if (Status st = open(info.name, start); !st) report(EventKind::Problem, info.name, "cannot read " + st.message());
  }
  for (const auto& problem : listing->problems) report(EventKind::Problem, "", "cannot read " + problem);
}

void TapSetImpl::account_removed() {
  if (!removed_) return;
  for (const auto& t : removed_->take()) {
    if (!matcher_.matches(t.topic)) continue;
    bool read = false;
    {
      std::lock_guard lock(mutex_);
      for (const auto& tap : taps_) {
        read = read || (descriptions_[tap->index].topic == t.topic && tap->created_realtime_ns == t.created_realtime_ns);
      }
      if (!read) {
        removed_unread_[t.topic] += t.published;
        removed_untaken_.push_back({t.topic, t.published, t.removed_realtime_ns});
      }
    }
    if (!read) {
      recording::report(options_.events, EventKind::Warning, t.topic,
                        "'" + t.topic + "' came and went before it could be read: " + std::to_string(t.published) +
                            (t.published == 1 ? " message" : " messages") + " missed");
    }
  }
  if (const std::uint64_t overrun = removed_->overrun(); overrun > removed_overrun_said_) {
    recording::report(options_.events, EventKind::Warning, "",
                      std::to_string(overrun - removed_overrun_said_) +
                          " more topics came and went too fast to be named: their messages are missed, uncounted");
    removed_overrun_said_ = overrun;
  }
}

void TapSetImpl::discovery_loop(std::optional<TopicWatch> watch) {
  // The watch notices a new topic at once; the periodic listing is there for what it misses.
  const auto period = std::chrono::milliseconds(watch ? 1000 : 200);
  auto next_listing = std::chrono::steady_clock::now() + period;
  bool appeared = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (appeared || std::chrono::steady_clock::now() >= next_listing) {
      discover();
      next_listing = std::chrono::steady_clock::now() + period;
    }
    // After the listing: a topic it opened is one read, not one removed unread.
    account_removed();
    if (watch) {
      appeared = watch->wait(std::chrono::milliseconds(50));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  account_removed();
}

void TapSetImpl::start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
    if (options_.readers == Readers::PerTopic) {
      for (auto& tap : taps_) start_topic_reader(*tap);
    } else {
      for (unsigned i = 0; i < options_.threads; ++i) readers_.emplace_back([this, i] { reader_loop(i); });
    }
  }
  if (!matcher_.follows_new_topics()) return;
  // Listening and watching before the first listing, so that nothing appears (or comes and goes)
  // unnoticed in between.
  if (auto log = RemovedTopicLog::listen(options_.domain); log.ok()) {
    removed_.emplace(std::move(*log));
  } else {
    report(EventKind::Warning, "",
           "topics that come and go before they are read will not be counted: " + log.message());
  }
  std::optional<TopicWatch> watch;
  if (auto w = TopicWatch::create(options_.domain); w.ok()) watch.emplace(std::move(*w));
  discover();
  discovery_ = std::thread([this, w = std::move(watch)]() mutable { discovery_loop(std::move(w)); });
}

void TapSetImpl::stop() {
  stop_.store(true);
  if (discovery_.joinable()) discovery_.join();
  // Joined outside the lock: a reader may be taking it to say a problem or describe its topic.
  std::vector<std::thread> readers;
  {
    std::lock_guard lock(mutex_);
    readers.swap(readers_);
  }
  for (auto& t : readers) if (t.joinable()) t.join();
}

std::vector<TopicCounts> TapSetImpl::counts() const {
  std::lock_guard lock(mutex_);
  std::vector<TopicCounts> out;
  out.reserve(taps_.size());
  for (const auto& tap : taps_) {
    out.push_back({descriptions_[tap->index].topic, tap->received.load(), tap->missed.load(), tap->dropped.load(),
                   tap->subscriber.published()});
  }
  for (const auto& [topic, missed] : removed_unread_) {
    auto same = std::find_if(out.begin(), out.end(), [&](const TopicCounts& c) { return c.topic == topic; });
    if (same != out.end()) {
      same->missed += missed;
    } else {
      out.push_back({topic, 0, missed, 0, missed});
    }
  }
  return out;
}

std::vector<RemovedUnread> TapSetImpl::take_removed_unread() {
  std::lock_guard lock(mutex_);
  std::vector<RemovedUnread> out;
  out.swap(removed_untaken_);
  return out;
}

std::vector<TopicDescription> TapSetImpl::topics() const {
  std::lock_guard lock(mutex_);
  return descriptions_;
}

}  // namespace detail

Result<TapSet> TapSet::create(TapSetOptions options, SampleSink& sink) {
  if (Status st = validate_domain(options.domain); !st) return st;
  auto matcher = TopicMatcher::compile(options.selection);
  if (!matcher) return matcher.status();
  const StartAt start = options.start;
  auto impl = std::make_unique<detail::TapSetImpl>(std::move(options), *matcher, sink);
  for (const auto& topic : matcher->named()) {
    if (Status st = impl->open(topic, start); !st) return st;
  }
  return TapSet(std::move(impl));
}

TapSet::TapSet(std::unique_ptr<detail::TapSetImpl> impl) : impl_(std::move(impl)) {}
TapSet::TapSet(TapSet&&) noexcept = default;
TapSet& TapSet::operator=(TapSet&&) noexcept = default;
TapSet::~TapSet() = default;

void TapSet::start() { impl_->start(); }
void TapSet::stop() { impl_->stop(); }
Status TapSet::read_ready() { return impl_->read_ready(); }
std::vector<TopicCounts> TapSet::counts() const { return impl_->counts(); }
std::vector<TopicDescription> TapSet::topics() const { return impl_->topics(); }
std::vector<RemovedUnread> TapSet::take_removed_unread() { return impl_->take_removed_unread(); }

}  // namespace cerulion::recording
