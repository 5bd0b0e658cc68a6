// SPDX-License-Identifier: Apache-2.0
// The iceoryx transport: the ping protocol over two iceoryx topics with zero-copy loans (untyped
// publisher and subscriber: a request is a chunk of exactly `size` bytes), waiting on a WaitSet,
// or, with the spin wait, polling the subscriber as iceoryx's own latency benchmark does.
// Subscriber queues hold 10 chunks (ROS 2's keep last 10) and drop the oldest.
//
// A process is attached to RouDi (has an iceoryx runtime) only while one of its requesters or
// responders exists: iceoryx 2.0 keeps its runtime for the life of the process, and RouDi sends
// SIGTERM to attached processes when it stops, so a bench that starts and stops RouDi would be
// killed by it. The runtime is therefore created through iceoryx's runtime factory hook and
// destroyed (which unregisters it) with the last endpoint. See transport_iceoryx.hpp for RouDi.

#include "transport_iceoryx.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "iceoryx_hoofs/internal/relocatable_pointer/base_relative_pointer.hpp"
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/internal/runtime/posh_runtime_impl.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"

#include "cerulion/measurement/transport.hpp"
#include "transport_plugin.hpp"

namespace cerulion::measurement {
namespace {

constexpr std::uint64_t kQueueCapacity = 10;
constexpr std::uint32_t kAlignment = 8;
/// How long a wait sleeps before looking at the cancel flag again.
constexpr auto kCancelSlice = std::chrono::milliseconds(50);

/// The runtime of this process, destroyable. iceoryx's own factory keeps a function-static one.
class OwnedRuntime final : public iox::runtime::PoshRuntimeImpl {
 public:
  explicit OwnedRuntime(const iox::RuntimeName_t* name)
      : PoshRuntimeImpl(iox::cxx::make_optional<const iox::RuntimeName_t*>(name)) {}
  static void install_factory() { setRuntimeFactory(&factory); }

 private:
  static iox::runtime::PoshRuntime& factory(iox::cxx::optional<const iox::RuntimeName_t*> name) noexcept;
};

std::optional<OwnedRuntime>& runtime_slot() {
  static std::optional<OwnedRuntime> slot;
  return slot;
}

iox::runtime::PoshRuntime& OwnedRuntime::factory(iox::cxx::optional<const iox::RuntimeName_t*> name) noexcept {
  auto& slot = runtime_slot();
  if (!slot) {
    // Only our endpoints create iceoryx objects, and they hold a Lease first.
    if (!name.has_value()) {
      std::fputs("cerulion: iceoryx used without a runtime\n", stderr);
      std::abort();
    }
    slot.emplace(*name);
  }
  return *slot;
}

std::mutex lease_mutex;

/// What an endpoint holds so that RouDi and this process's runtime outlive it: the RouDi this
/// process started (when none was running) and the runtime. The last one out unregisters.
class Lease {
 public:
  static Result<std::shared_ptr<Lease>> acquire(std::uint64_t max_payload) {
    static std::weak_ptr<Lease> current;
    std::unique_lock lock(lease_mutex);
    if (auto live = current.lock()) return live;
    while (runtime_slot()) {  // the last lease is being destroyed in another thread: let it finish
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
    }

    std::shared_ptr<iceoryx::Roudi> roudi;
    if (!iceoryx::roudi_running()) {
      auto started = iceoryx::Roudi::start(max_payload);
      if (!started.ok()) return Status{started.code(), "iceoryx: " + started.message()};
      roudi = std::make_shared<iceoryx::Roudi>(std::move(*started));
    }
    static std::once_flag once;
    std::call_once(once, [] {
      // RouDi's reconnect chatter and warnings go to stderr otherwise; errors still show.
      iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kError,
                                                               iox::log::LogLevelOutput::kHideLogLevel);
      OwnedRuntime::install_factory();
    });
    static std::uint64_t generation = 0;
    const std::string name = "cerulion_" + std::to_string(getpid()) + "_" + std::to_string(++generation);
    iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name));
    // iceoryx aborts on a loan that no pool holds, so learn the largest one before any loan.
    const std::uint64_t max = iceoryx::running_roudi_max_payload().value_or(max_payload);
    auto lease = std::shared_ptr<Lease>(new Lease(std::move(roudi), max));
    current = lease;
    return lease;
  }
  ~Lease() {  // unregisters from RouDi; then the RouDi, if ours, stops
    std::lock_guard lock(lease_mutex);
    runtime_slot().reset();
    // The runtime registers the shared memory it maps under RouDi's segment ids and never
    // unregisters them; a later runtime (another RouDi, mapped elsewhere) needs them free.
    iox::rp::BaseRelativePointer::unregisterAll();
  }
  /// Largest payload RouDi's pools hold (the one asked for when RouDi's config is unreadable).
  std::uint64_t max_payload() const { return max_payload_; }

 private:
  Lease(std::shared_ptr<iceoryx::Roudi> roudi, std::uint64_t max_payload)
      : roudi_(std::move(roudi)), max_payload_(max_payload) {}
  std::shared_ptr<iceoryx::Roudi> roudi_;
  std::uint64_t max_payload_;
};

Result<iox::capro::ServiceDescription> service(const TransportOptions& o, const std::string& topic) {
  const std::string instance = o.domain.empty() ? "default" : o.domain;
  if (instance.size() > iox::capro::IdString_t::capacity() || topic.size() > iox::capro::IdString_t::capacity()) {
    return Status{ErrorCode::InvalidTopicName, "iceoryx: a domain or topic name is longer than " +
                                                   std::to_string(iox::capro::IdString_t::capacity()) + " characters"};
  }
  return iox::capro::ServiceDescription{"cerulion",
                                        iox::capro::IdString_t(iox::cxx::TruncateToCapacity, instance.c_str()),
                                        iox::capro::IdString_t(iox::cxx::TruncateToCapacity, topic.c_str())};
}

std::string loan_error(iox::popo::AllocationError e, std::size_t size) {
  switch (e) {
    case iox::popo::AllocationError::NO_MEMPOOLS_AVAILABLE:
      return "iceoryx: RouDi has no memory pool for a " + std::to_string(size) + "-byte chunk";
    case iox::popo::AllocationError::RUNNING_OUT_OF_CHUNKS:
      return "iceoryx: RouDi's memory pool for " + std::to_string(size) + "-byte chunks is exhausted";
    case iox::popo::AllocationError::TOO_MANY_CHUNKS_ALLOCATED_IN_PARALLEL:
      return "iceoryx: too many chunks loaned at once";
    default:
      return "iceoryx: cannot loan a " + std::to_string(size) + "-byte chunk";
  }
}

/// A publisher on one topic and a subscriber on the other, and a WaitSet on the subscriber's data.
/// Declared so that the WaitSet, then the ports, then the lease are destroyed.
struct Endpoints {
  std::shared_ptr<Lease> lease;
  iox::popo::UntypedPublisher publisher;
  iox::popo::UntypedSubscriber subscriber;
  iox::popo::WaitSet<> waitset;
  const std::atomic<bool>* cancel;
  bool poll;  ///< busy-poll the subscriber instead of sleeping in the WaitSet (the spin wait)

  Endpoints(std::shared_ptr<Lease> l, const iox::capro::ServiceDescription& out,
            const iox::capro::ServiceDescription& in, const std::atomic<bool>* c, bool busy_poll)
      : lease(std::move(l)),
        publisher(out, publisher_options()),
        subscriber(in, subscriber_options()),
        cancel(c),
        poll(busy_poll) {}

  static iox::popo::PublisherOptions publisher_options() {
    iox::popo::PublisherOptions o;
    o.historyCapacity = 0;  // volatile
    return o;
  }
  static iox::popo::SubscriberOptions subscriber_options() {
    iox::popo::SubscriberOptions o;
    o.queueCapacity = kQueueCapacity;
    o.historyRequest = 0;
    return o;
  }

  static Result<std::unique_ptr<Endpoints>> create(const TransportOptions& o, const std::string& out,
                                                   const std::string& in) {
    auto out_service = service(o, out);
    if (!out_service.ok()) return out_service.status();
    auto in_service = service(o, in);
    if (!in_service.ok()) return in_service.status();
    auto lease = Lease::acquire(o.max_payload);
    if (!lease.ok()) return lease.status();
    auto e = std::make_unique<Endpoints>(std::move(*lease), *out_service, *in_service, o.cancel,
                                         o.wait == WaitStrategy::Spin);
    bool attached = true;
    e->waitset.attachState(e->subscriber, iox::popo::SubscriberState::HAS_DATA).or_else([&](auto) { attached = false; });
    if (!attached) return Status{ErrorCode::SystemError, "iceoryx: cannot attach the subscriber to a WaitSet"};
    return e;
  }

  bool connected() const {
    return publisher.hasSubscribers() && subscriber.getSubscriptionState() == iox::SubscribeState::SUBSCRIBED;
  }

  /// Waits for data up to `deadline`, in slices when there is a cancel flag. Not ok on Timeout or
  /// Interrupted.
  Status wait(std::chrono::steady_clock::time_point deadline) {
    if (cancel && cancel->load()) return {ErrorCode::Interrupted, "interrupted"};
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return {ErrorCode::Timeout, "no message within the timeout"};
    auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    if (cancel) slice = std::min<std::chrono::nanoseconds>(slice, kCancelSlice);
    if (poll) {
      poll_for_data(now + slice);
      return {};
    }
    (void)waitset.timedWait(iox::units::Duration::fromNanoseconds(static_cast<std::uint64_t>(slice.count())));
    return {};
  }

  /// Polls until the subscriber has data or `until`, looking at the clock every 256 polls.
  void poll_for_data(std::chrono::steady_clock::time_point until) {
    for (std::uint32_t i = 1;; ++i) {
      if (subscriber.hasData()) return;
      if ((i & 255) == 0 && std::chrono::steady_clock::now() >= until) return;
    }
  }
};

class IceoryxRequester final : public Requester {
 public:
  IceoryxRequester(std::unique_ptr<Endpoints> e, std::uint64_t max_payload)
      : e_(std::move(e)), max_payload_(max_payload) {}
  ~IceoryxRequester() override { drop(); }

  std::uint64_t max_payload() const noexcept override { return max_payload_; }

  Status wait_for_responder(std::chrono::nanoseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!e_->connected()) {
      if (e_->cancel && e_->cancel->load()) return {ErrorCode::Interrupted, "interrupted"};
      if (std::chrono::steady_clock::now() >= deadline) {
        return {ErrorCode::Timeout, "iceoryx: no responder connected to the ping and pong topics within the timeout"};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return {};
  }

  bool responder_present() const noexcept override { return e_->connected(); }

  Status prepare(std::size_t size, std::chrono::nanoseconds) override {
    drop();
    if (size < kStampBytes) return {ErrorCode::InvalidArgument, "a request must hold the 8-byte timestamp"};
    if (size > max_payload_ || size > std::numeric_limits<std::uint32_t>::max()) {
      return {ErrorCode::PayloadTooLarge, "iceoryx: RouDi has no memory pool for a " + std::to_string(size) +
                                              "-byte chunk (its largest holds " + std::to_string(max_payload_) + " bytes)"};
    }
    auto loan = e_->publisher.loan(static_cast<std::uint32_t>(size), kAlignment);
    if (loan.has_error()) {
      const bool no_pool = loan.get_error() == iox::popo::AllocationError::NO_MEMPOOLS_AVAILABLE;
      return {no_pool ? ErrorCode::PayloadTooLarge : ErrorCode::OutOfMemory, loan_error(loan.get_error(), size)};
    }
    loaned_ = loan.value();
    return {};
  }

  void keep_warm() noexcept override {
    if (loaned_) asm volatile("" : : "r"(*static_cast<volatile std::uint64_t*>(loaned_)) : "memory");
  }

  Status send(std::uint64_t stamp, std::chrono::nanoseconds) override {
    if (!loaned_) return {ErrorCode::InvalidArgument, "send without a prepared request"};
    std::memcpy(loaned_, &stamp, kStampBytes);
    e_->publisher.publish(std::exchange(loaned_, nullptr));
    return {};
  }

  Result<Reply> receive(std::chrono::nanoseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto taken = e_->subscriber.take();
      if (!taken.has_error()) {
        Reply reply;
        reply.arrived_ns = monotonic_ns();
        const void* chunk = taken.value();
        const bool stamped = iox::mepoo::ChunkHeader::fromUserPayload(chunk)->userPayloadSize() >= kStampBytes;
        if (stamped) std::memcpy(&reply.stamp, chunk, kStampBytes);
        e_->subscriber.release(chunk);
        if (stamped) return reply;
        continue;
      }
      if (Status s = e_->wait(deadline); !s.ok()) return s;
    }
  }

 private:
  void drop() {
    if (loaned_) e_->publisher.release(std::exchange(loaned_, nullptr));
  }
  std::unique_ptr<Endpoints> e_;
  std::uint64_t max_payload_;
  void* loaned_ = nullptr;
};

class IceoryxResponder final : public Responder {
 public:
  IceoryxResponder(std::unique_ptr<Endpoints> e, bool stop_on_request)
      : e_(std::move(e)), stop_on_request_(stop_on_request) {}

  Status serve() override {
    const auto forever = std::chrono::steady_clock::time_point::max();
    for (;;) {
      auto taken = e_->subscriber.take();
      if (taken.has_error()) {
        Status s = e_->wait(forever);
        if (s.code() == ErrorCode::Interrupted) return {};
        continue;
      }
      const void* request = taken.value();
      const std::uint32_t size = iox::mepoo::ChunkHeader::fromUserPayload(request)->userPayloadSize();
      std::uint64_t stamp = 0;
      if (size >= kStampBytes) std::memcpy(&stamp, request, kStampBytes);
      e_->subscriber.release(request);  // before loaning: the request's chunk can serve the reply
      if (size < kStampBytes) continue;
      if (stamp == kStopStamp) {
        if (stop_on_request_) return {};
        continue;
      }
      if (size > e_->lease->max_payload()) {  // cannot happen with our requester; iceoryx would abort
        return {ErrorCode::PayloadTooLarge, loan_error(iox::popo::AllocationError::NO_MEMPOOLS_AVAILABLE, size)};
      }
      auto reply = e_->publisher.loan(size, kAlignment);
      if (reply.has_error()) return {ErrorCode::OutOfMemory, loan_error(reply.get_error(), size)};
      std::memcpy(reply.value(), &stamp, kStampBytes);
      e_->publisher.publish(reply.value());
    }
  }

 private:
  std::unique_ptr<Endpoints> e_;
  bool stop_on_request_;
};

}  // namespace

Result<std::unique_ptr<Requester>> make_iceoryx_requester(const RequesterOptions& o) {
  auto e = Endpoints::create(o, request_topic(o.prefix), reply_topic(o.prefix));
  if (!e.ok()) return e.status();
  const std::uint64_t max = (*e)->lease->max_payload();
  return std::unique_ptr<Requester>(new IceoryxRequester(std::move(*e), max));
}

Result<std::unique_ptr<Responder>> make_iceoryx_responder(const ResponderOptions& o) {
  auto e = Endpoints::create(o, reply_topic(o.prefix), request_topic(o.prefix));
  if (!e.ok()) return e.status();
  return std::unique_ptr<Responder>(new IceoryxResponder(std::move(*e), o.stop_on_request));
}

}  // namespace cerulion::measurement

// The plugin transport-iceoryx.so: only a process that uses this transport loads iceoryx.
CERULION_PLUGIN_TABLE(cerulion::measurement::TransportPlugin,
                      {&cerulion::measurement::make_iceoryx_requester, &cerulion::measurement::make_iceoryx_responder})
