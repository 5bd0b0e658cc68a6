// SPDX-License-Identifier: Apache-2.0
// The keeper's life: open the store, tap, write what the taps take into the store, stop.

#include <cstring>
#include <filesystem>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/names.hpp"

#include "keeper_impl.hpp"

namespace cerulion::flashback {

namespace detail {

namespace {
// The open chunk is closed at least this often, so eviction by window is fine-grained and a quiet
// topic's messages are compressed rather than held raw.
constexpr std::uint64_t kChunkIntervalNs = 1'000'000'000ull;
// The compressing thread looks at the clock at least this often when nothing is sealed.
constexpr auto kCompressIdle = std::chrono::milliseconds(100);
}  // namespace

void StoreSink::on_topic(const recording::TopicDescription& topic) {
  auto id = store_.channel_for(topic.topic, to_string(topic.mode), topic.depth, topic.max_payload, topic.type);
  {
    std::lock_guard lock(mutex_);
    if (channels_.size() <= topic.index) channels_.resize(topic.index + 1);
    channels_[topic.index] = id;
  }
  if (!trigger_topic_.empty() && topic.topic == trigger_topic_) trigger_index_.store(topic.index, std::memory_order_release);
}

bool StoreSink::on_sample(const recording::TappedSample& sample) {
  if (sample.topic_index == trigger_index_.load(std::memory_order_acquire)) keeper_.trigger_on_topic(trigger_topic_, sample.data);
  std::optional<std::uint16_t> id;
  std::uint64_t lost_before = sample.lost_before;
  {
    std::lock_guard lock(mutex_);
    if (sample.topic_index < channels_.size()) id = channels_[sample.topic_index];
    if (seen_.size() <= sample.topic_index) seen_.resize(sample.topic_index + 1);
    if (id && !seen_[sample.topic_index]) {
      seen_[sample.topic_index] = true;
      // What was published while no keeper ran (the one before was killed, say) is a gap in the
      // store's history: counted lost with the first message after it. (The store keeps 32 bits
      // of a sequence; a topic made anew starts again, and is no gap.)
      const std::uint64_t next = store_.channel(*id).next_sequence.load(std::memory_order_relaxed);
      const auto gap = static_cast<std::uint32_t>(static_cast<std::uint32_t>(sample.sequence) - static_cast<std::uint32_t>(next));
      // The gap covers what this tap missed before its first sample too: counted once.
      if (next != 0 && gap < (1u << 31)) lost_before = gap;
    }
  }
  if (!id) {
    // More topics than the store's channel table holds: counted, never silently.
    store_.header().messages_dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (!keeper_.error().ok()) return false;
  auto taken = store_.take(*id, static_cast<std::uint32_t>(sample.sequence), sample.log_time, sample.publish_time,
                           sample.data, lost_before);
  if (!taken) {
    keeper_.fail(taken.status());
    return false;
  }
  if (*taken) {
    if (dropping_.exchange(false, std::memory_order_relaxed)) {
      keeper_.say(recording::EventKind::Info, store_.path(), "keeping up again: messages are stored");
    }
    return true;
  }
  if (!dropping_.exchange(true, std::memory_order_relaxed)) {
    keeper_.say(recording::EventKind::Warning, store_.path(),
                "cannot keep up: compression is behind the input and the staging area is full; dropping messages "
                "(counted in their topics' lost)");
  }
  return false;
}

KeeperImpl::KeeperImpl(KeeperOptions o, Store s) : options(std::move(o)), store(std::move(s)) {}

KeeperImpl::~KeeperImpl() { stop(); }

Status KeeperImpl::start() {
  dumper_ = std::thread([this] { dump_loop(); });
  ::pthread_setname_np(dumper_.native_handle(), "fb-dump");
  return start_keeping();
}

Status KeeperImpl::start_keeping() {
  auto& impl = impl_of(store);
  // The taps stage into shared memory; this keeper's own thread compresses.
  impl.compress_in_background(true, options.lockstep);
  recording::TapSetOptions tap_options;
  tap_options.selection = options.selection;
  tap_options.domain = options.domain;
  tap_options.lockstep = options.lockstep;
  tap_options.events = options.events;
  // The trigger topic is read by the one tap set, as a topic named: tapped once, and kept.
  if (!options.trigger_topic.empty()) tap_options.selection.topics.push_back(options.trigger_topic);
  sink_ = std::make_unique<StoreSink>(*this, impl, options.trigger_topic);
  auto taps = recording::TapSet::create(tap_options, *sink_);
  if (!taps) return taps.status();
  taps_.emplace(std::move(*taps));
  // The named topics are the store's channels from the start, typed as the topics declare: a dump
  // catching up from their rings knows them before this keeper's tap (at idle priority, perhaps
  // starved) has read anything. Topics found by patterns join as the tap finds them.
  for (auto topic : taps_->topics()) {
    if (auto info = inspect_topic(topic.topic, options.domain); info.ok()) topic.type = info->type;
    sink_->on_topic(topic);
  }
  // Only compression goes idle: the taps, discovery, triggers and dumps cost little and run at the
  // caller's priority, so that a busy machine, which is when a robot fails, does not leave them
  // without CPU (an idle tap attaches to nothing for seconds, and a topic's ring is a few
  // milliseconds deep). A tap finding compression behind stores what is staged uncompressed
  // (StoreImpl::take).
  compressor_running_ = true;
  compressor_ = std::thread([this] {
    if (options.idle_priority) {
      sched_param param{};
      if (::sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
        say(recording::EventKind::Warning, "",
            fmt::format("cannot compress at idle priority ({}); it runs at normal priority", std::strerror(errno)));
      }
    }
    compress_loop();
    std::unique_ptr<KeeperImpl> left_behind;
    {
      std::lock_guard lock(compressor_mutex_);
      compressor_running_ = false;
      left_behind = std::move(self_);
      compressor_done_.notify_all();  // under the lock: the keeper may be deleted once it is free
    }
    // A keeper disposed of while this thread was starved is deleted here, by the last thread using
    // it; nothing of it is touched after.
    left_behind.reset();
  });
  ::pthread_setname_np(compressor_.native_handle(), "fb-compress");
  taps_->start();
  control_ = std::thread([this] { control_loop(); });
  ::pthread_setname_np(control_.native_handle(), "fb-control");
  return {};
}

void KeeperImpl::compress_loop() {
  auto& impl = impl_of(store);
  while (!stop_compressing_.load()) {
    auto compressed = impl.compress_sealed();
    if (!compressed) {
      fail(compressed.status());
      return;
    }
    const std::uint64_t now = realtime_ns();
    impl.seal_if_older(now, kChunkIntervalNs);
    impl.evict_expired(now);
    measure_rates(now);
    if (!*compressed) impl.wait_for_sealed(kCompressIdle);
  }
}

void KeeperImpl::measure_rates(std::uint64_t now) {
  if (now - last_rate_ns_ < 1'000'000'000ull) return;
  auto& impl = impl_of(store);
  const double dt = last_rate_ns_ ? static_cast<double>(now - last_rate_ns_) / 1e9 : 0;
  const std::uint32_t count = std::min(impl.header().channel_count.load(std::memory_order_acquire), kMaxChannels);
  for (std::uint16_t id = 0; id < count; ++id) {
    auto& c = impl.channel(id);
    const std::uint64_t messages = c.messages.load(std::memory_order_relaxed);
    if (dt > 0) {
      const double rate = static_cast<double>(messages - messages_at_last_rate_[id]) / dt;
      c.rate_millihertz.store(static_cast<std::uint64_t>(rate * 1000.0), std::memory_order_relaxed);
    }
    messages_at_last_rate_[id] = messages;
  }
  last_rate_ns_ = now;
}

void KeeperImpl::fail(Status status) {
  {
    std::lock_guard lock(mutex_);
    if (!error_.ok()) return;
    error_ = status;
  }
  say(recording::EventKind::Problem, store.path(), "stopped storing: " + status.message());
}

Status KeeperImpl::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void KeeperImpl::stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_.store(true);
  if (control_.joinable()) control_.join();
  // A dump still waiting for its post window is written now rather than lost.
  {
    std::lock_guard lock(mutex_);
    stop_dumping_ = true;
  }
  dump_wake_.notify_all();
  if (dumper_.joinable()) dumper_.join();
  // The taps first, while the compressor still frees room for a lockstep tap waiting for it. What
  // was published before the stop and not read yet is read now, so that every message published
  // while the keeper ran is in the store or counted as lost, however far behind a loaded machine
  // left the tap threads.
  if (taps_) {
    taps_->stop();
    (void)taps_->read_ready();  // what was read before an error is kept
  }
  stop_compressing_.store(true);
  impl_of(store).wake();
  // What the taps took is in the store (what is staged committed, uncompressed if the compressing
  // thread is busy), and the store is free for whoever comes next.
  impl_of(store).release();
  // The compressing thread, at idle priority on a busy machine, may take seconds to get the CPU to
  // end the chunk it is on (its work is thrown away): it is not waited for long. dispose() leaves
  // this object to it.
  std::unique_lock lock(compressor_mutex_);
  compressor_done_.wait_for(lock, std::chrono::milliseconds(500), [&] { return !compressor_running_; });
  if (compressor_running_) {
    compressor_.detach();
  } else if (compressor_.joinable()) {
    lock.unlock();
    compressor_.join();
  }
}

void KeeperImpl::dispose(std::unique_ptr<KeeperImpl> keeper) {
  keeper->stop();
  auto* raw = keeper.get();
  std::lock_guard lock(raw->compressor_mutex_);
  if (raw->compressor_running_) raw->self_ = std::move(keeper);
}

std::optional<DumpSummary> KeeperImpl::last_dump() const {
  std::lock_guard lock(mutex_);
  return last_dump_;
}

void KeeperImpl::say(recording::EventKind kind, std::string subject, std::string message) const {
  recording::report(options.events, kind, std::move(subject), std::move(message));
}

}  // namespace detail

Keeper::Keeper(std::unique_ptr<detail::KeeperImpl> impl) : impl_(std::move(impl)) {}
Keeper::Keeper(Keeper&&) noexcept = default;
Keeper& Keeper::operator=(Keeper&& other) noexcept {
  if (this != &other) {
    if (impl_) detail::KeeperImpl::dispose(std::move(impl_));
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Keeper::~Keeper() {
  if (impl_) detail::KeeperImpl::dispose(std::move(impl_));
}

Result<Keeper> Keeper::start(KeeperOptions options) {
  if (options.post_s < 0 || options.on_stall_s < 0) {
    return Status(ErrorCode::InvalidArgument, "post and stall times cannot be negative");
  }
  if (!options.trigger_topic.empty()) {
    // Canonical, as the tap set names its topics.
    auto canonical = normalize_topic_name(options.trigger_topic);
    if (!canonical) return Status(canonical.code(), "trigger topic: " + canonical.message());
    options.trigger_topic = *canonical;
  }
  std::error_code ec;
  auto dir = std::filesystem::absolute(options.dump_dir.empty() ? "." : options.dump_dir, ec);
  if (ec) {
    return Status(ErrorCode::InvalidArgument, fmt::format("dump directory '{}': {}", options.dump_dir, ec.message()),
                  Subject::path(options.dump_dir));
  }
  options.dump_dir = dir.lexically_normal().string();
  if (options.dump_dir.size() > 1 && options.dump_dir.back() == '/') options.dump_dir.pop_back();
  if (options.dump_dir.size() >= detail::kPathCapacity) {
    return Status(ErrorCode::InvalidArgument,
                  fmt::format("dump directory: a path of at most {} bytes, got {}", detail::kPathCapacity - 1,
                              options.dump_dir.size()),
                  Subject::path(options.dump_dir));
  }
  auto store = Store::open_for_keeper(options.domain, options.name, options.limits);
  if (!store) return store.status();
  KeeperSettings settings;
  settings.dump_dir = options.dump_dir;
  settings.on_signal = options.dumps_on_signal;
  settings.trigger_topic = options.trigger_topic;
  settings.on_death = options.on_death;
  settings.on_stall_s = options.on_stall_s;
  settings.post_s = options.post_s;
  settings.max_dumps_per_hour = options.max_dumps_per_hour;
  settings.max_disk_bytes = options.max_disk_bytes;
  settings.selection = options.selection;
  if (!options.trigger_topic.empty()) settings.selection->topics.push_back(options.trigger_topic);
  detail::impl_of(*store).set_keeper_settings(settings);
  // Damage in a store taken over is set aside, and said once.
  if (const StoreDamage damage = store->damage_found(); damage.any()) {
    recording::report(options.events, recording::EventKind::Warning, store->path(), describe(damage));
  }
  // A limit /dev/shm has not the room for is taken (it grows as it fills), and said.
  const auto status = store->status();
  const std::uint64_t to_grow =
      status.memory_usable_bytes - std::min(status.memory_usable_bytes, status.memory_committed_bytes);
  if (to_grow > status.shm_free_bytes) {
    recording::report(options.events, recording::EventKind::Warning, status.path,
                      fmt::format("memory limit {}, but /dev/shm has {} free: the window will be cut short once "
                                  "/dev/shm is full",
                                  detail::amount(static_cast<double>(status.memory_limit_bytes)),
                                  detail::amount(static_cast<double>(status.shm_free_bytes))));
  }
  auto impl = std::make_unique<detail::KeeperImpl>(std::move(options), std::move(*store));
  if (auto st = impl->start(); !st) return st;
  return Keeper(std::move(impl));
}

void Keeper::trigger(std::string kind, std::string details, std::string note) {
  impl_->trigger(std::move(kind), std::move(details), std::move(note));
}
void Keeper::stop() { impl_->stop(); }
StoreStatus Keeper::status() const { return impl_->store.status(); }
Status Keeper::error() const { return impl_->error(); }
std::optional<DumpSummary> Keeper::last_dump() const { return impl_->last_dump(); }
const Store& Keeper::store() const { return impl_->store; }

}  // namespace cerulion::flashback
