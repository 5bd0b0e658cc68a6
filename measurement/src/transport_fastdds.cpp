// SPDX-License-Identifier: Apache-2.0
// The Fast DDS transport: the ping protocol over two DDS topics of raw bytes, set up the way ROS 2's
// default middleware (rmw_fastrtps, Humble) sets up a topic with the default QoS profile:
// reliable, keep last 10, volatile; synchronous publication; histories preallocated and grown on
// demand; data sharing off; the participant's default transports (UDPv4 + shared memory in Fast
// DDS 2.9). Payloads are serialized (copied) as CDR `sequence<octet>`, as a ROS 2 byte array is.
//
// Fast DDS reads its XML profiles (FASTRTPS_DEFAULT_PROFILES_FILE, DEFAULT_FASTRTPS_PROFILES.xml)
// as under ROS 2, so a user can measure the same tuning they deploy; the QoS above still wins.
// Large messages work with the defaults but are slow: the default shared-memory segment is
// 512 KiB, so a message above it loses fragments and waits for NACK repair (measured here: ~20 ms
// at 1 MiB, ~100-250 ms at 16 MiB; with a 64 MiB segment, ~1 ms and ~14 ms).

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include <fastdds/dds/core/condition/WaitSet.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/common/SerializedPayload.h>

#include "cerulion/core/detail/shm_header.hpp"
#include "cerulion/measurement/transport.hpp"
#include "transport_plugin.hpp"

namespace cerulion::measurement {
namespace {

namespace dds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

constexpr const char* kTypeName = "cerulion::measurement::RawBytes";
/// CDR header (4) + sequence length (4).
constexpr std::uint32_t kHeaderBytes = 8;
/// How long a wait sleeps before looking at the cancel flag again.
constexpr auto kCancelSlice = std::chrono::milliseconds(50);

/// A message: `size` bytes in a buffer that only grows and is never zero-filled (the protocol
/// leaves all but the stamp unwritten, as the native lanes do).
struct RawBytes {
  std::unique_ptr<std::uint8_t[]> buffer;
  std::uint32_t capacity = 0;
  std::uint32_t size = 0;

  void resize(std::uint32_t n) {
    if (n > capacity) {
      buffer.reset(new std::uint8_t[n]);
      capacity = n;
    }
    size = n;
  }
};

/// The topic type: `sequence<octet>` in little-endian CDR, unbounded like a ROS 2 byte array (so
/// Fast DDS never picks data sharing, which needs a bounded, plain type).
class RawBytesType final : public dds::TopicDataType {
 public:
  RawBytesType() {
    setName(kTypeName);
    m_typeSize = kHeaderBytes + 64;  // initial payload size; histories grow it on demand
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }
  bool serialize(void* data, rtps::SerializedPayload_t* payload) override {
    auto* m = static_cast<RawBytes*>(data);
    const std::uint32_t need = kHeaderBytes + m->size;
    if (payload->max_size < need) return false;
    static constexpr std::uint8_t kCdrLe[4] = {0x00, 0x01, 0x00, 0x00};
    std::memcpy(payload->data, kCdrLe, 4);
    std::memcpy(payload->data + 4, &m->size, 4);  // little-endian hosts only, like the stamp
    if (m->size) std::memcpy(payload->data + kHeaderBytes, m->buffer.get(), m->size);
    payload->encapsulation = CDR_LE;
    payload->length = need;
    return true;
  }
  bool deserialize(rtps::SerializedPayload_t* payload, void* data) override {
    auto* m = static_cast<RawBytes*>(data);
    if (payload->length < kHeaderBytes) return false;
    std::uint32_t n = 0;
    std::memcpy(&n, payload->data + 4, 4);
    if (n > payload->length - kHeaderBytes) return false;
    m->resize(n);
    if (n) std::memcpy(m->buffer.get(), payload->data + kHeaderBytes, n);
    return true;
  }
  std::function<std::uint32_t()> getSerializedSizeProvider(void* data) override {
    return [data] { return kHeaderBytes + static_cast<RawBytes*>(data)->size; };
  }
  void* createData() override { return new RawBytes; }
  void deleteData(void* data) override { delete static_cast<RawBytes*>(data); }
  bool getKey(void*, rtps::InstanceHandle_t*, bool) override { return false; }
};

/// DDS domain ids are small numbers: a cerulion domain maps to one of 100 (100..199, clear of
/// ROS 2's usual 0) by a stable hash, so that concurrent measurements rarely even discover each
/// other; the topic names carry the domain too, so a collision only costs discovery traffic.
std::uint32_t dds_domain_id(const std::string& domain) {
  return 100 + cerulion::detail::fnv1a(domain) % 100;
}

/// ROS 2 prefixes topic names with "rt"; '/' is allowed in DDS topic names.
std::string dds_topic(const TransportOptions& o, const std::string& name) {
  return o.domain.empty() ? "rt" + name : "rt/" + o.domain + name;
}

/// One participant per DDS domain and process, shared by every endpoint there: ROS 2 creates one
/// per context, and a requester and responder in one process then use intra-process delivery.
class Participant {
 public:
  static Result<std::shared_ptr<Participant>> get(const std::string& domain) {
    static std::mutex mutex;
    static std::vector<std::weak_ptr<Participant>> live;
    std::lock_guard lock(mutex);
    const std::uint32_t id = dds_domain_id(domain);
    for (auto& w : live) {
      if (auto p = w.lock(); p && p->id_ == id) return p;
    }
    auto* factory = dds::DomainParticipantFactory::get_instance();
    dds::DomainParticipantQos qos = factory->get_default_participant_qos();
    qos.name("cerulion_measurement");
    dds::DomainParticipant* participant = factory->create_participant(id, qos);
    if (!participant) {
      return Status{ErrorCode::SystemError, "Fast DDS: cannot create a participant in DDS domain " + std::to_string(id)};
    }
    dds::TypeSupport type(new RawBytesType);
    if (type.register_type(participant) != ReturnCode_t::RETCODE_OK) {
      factory->delete_participant(participant);
      return Status{ErrorCode::SystemError, "Fast DDS: cannot register the raw bytes type"};
    }
    auto p = std::shared_ptr<Participant>(new Participant(id, participant));
    std::erase_if(live, [](auto& w) { return w.expired(); });
    live.push_back(p);
    return p;
  }
  ~Participant() {
    participant_->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
  }
  dds::DomainParticipant* get() const { return participant_; }

  /// The topic of that name, created on first use (a requester and a responder in one process
  /// share the participant, and a participant holds one Topic per name).
  dds::Topic* topic(const std::string& name) {
    std::lock_guard lock(mutex_);
    if (auto* d = participant_->lookup_topicdescription(name)) return static_cast<dds::Topic*>(d);
    return participant_->create_topic(name, kTypeName, participant_->get_default_topic_qos());
  }
  std::mutex& mutex() { return mutex_; }

 private:
  Participant(std::uint32_t id, dds::DomainParticipant* p) : id_(id), participant_(p) {}
  std::uint32_t id_;
  dds::DomainParticipant* participant_;
  std::mutex mutex_;
};

/// A writer on one topic and a reader on the other, with ROS 2's default QoS, and a wait set on
/// the reader's data. Deleted in reverse order while the participant is still alive.
class Endpoints {
 public:
  static Result<std::unique_ptr<Endpoints>> create(const TransportOptions& o, const std::string& out,
                                                   const std::string& in) {
    auto participant = Participant::get(o.domain);
    if (!participant.ok()) return participant.status();
    auto e = std::unique_ptr<Endpoints>(new Endpoints(*participant, o.cancel));
    dds::DomainParticipant* p = e->participant_->get();
    dds::Topic* out_topic = e->participant_->topic(dds_topic(o, out));
    dds::Topic* in_topic = e->participant_->topic(dds_topic(o, in));
    if (!out_topic || !in_topic) return Status{ErrorCode::SystemError, "Fast DDS: cannot create the topics"};
    std::lock_guard lock(e->participant_->mutex());
    e->publisher_ = p->create_publisher(p->get_default_publisher_qos());
    e->subscriber_ = p->create_subscriber(p->get_default_subscriber_qos());
    if (!e->publisher_ || !e->subscriber_) return Status{ErrorCode::SystemError, "Fast DDS: cannot create a publisher"};

    dds::DataWriterQos wq = e->publisher_->get_default_datawriter_qos();
    wq.reliability().kind = dds::RELIABLE_RELIABILITY_QOS;
    wq.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 10;
    wq.durability().kind = dds::VOLATILE_DURABILITY_QOS;
    wq.publish_mode().kind = dds::SYNCHRONOUS_PUBLISH_MODE;
    wq.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    wq.data_sharing().off();
    e->writer_ = e->publisher_->create_datawriter(out_topic, wq);

    dds::DataReaderQos rq = e->subscriber_->get_default_datareader_qos();
    rq.reliability().kind = dds::RELIABLE_RELIABILITY_QOS;
    rq.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    rq.history().depth = 10;
    rq.durability().kind = dds::VOLATILE_DURABILITY_QOS;
    rq.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    rq.data_sharing().off();
    e->reader_ = e->subscriber_->create_datareader(in_topic, rq);
    if (!e->writer_ || !e->reader_) return Status{ErrorCode::SystemError, "Fast DDS: cannot create a writer or reader"};

    e->reader_->get_statuscondition().set_enabled_statuses(dds::StatusMask::data_available());
    e->waitset_.attach_condition(e->reader_->get_statuscondition());
    return e;
  }

  ~Endpoints() {
    if (reader_) waitset_.detach_condition(reader_->get_statuscondition());
    std::lock_guard lock(participant_->mutex());
    if (subscriber_) {
      if (reader_) subscriber_->delete_datareader(reader_);
      participant_->get()->delete_subscriber(subscriber_);
    }
    if (publisher_) {
      if (writer_) publisher_->delete_datawriter(writer_);
      participant_->get()->delete_publisher(publisher_);
    }
  }

  bool matched() const {
    dds::PublicationMatchedStatus pub{};
    dds::SubscriptionMatchedStatus sub{};
    writer_->get_publication_matched_status(pub);
    reader_->get_subscription_matched_status(sub);
    return pub.current_count > 0 && sub.current_count > 0;
  }
  bool reader_matched() const {
    dds::SubscriptionMatchedStatus sub{};
    reader_->get_subscription_matched_status(sub);
    return sub.current_count > 0;
  }

  bool write(RawBytes& m) { return writer_->write(&m); }

  /// Takes the next sample into `m`, waiting up to `timeout`. No allocation once `m` has grown.
  Status take(RawBytes& m, std::chrono::nanoseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      dds::SampleInfo info;
      while (reader_->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
        if (info.valid_data) return {};
      }
      if (cancel_ && cancel_->load()) return {ErrorCode::Interrupted, "interrupted"};
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return {ErrorCode::Timeout, "no message within the timeout"};
      auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
      if (cancel_) slice = std::min<std::chrono::nanoseconds>(slice, kCancelSlice);
      dds::ConditionSeq active;
      waitset_.wait(active, eprosima::fastrtps::Duration_t(static_cast<std::int32_t>(slice.count() / 1'000'000'000),
                                                          static_cast<std::uint32_t>(slice.count() % 1'000'000'000)));
    }
  }

 private:
  Endpoints(std::shared_ptr<Participant> p, const std::atomic<bool>* cancel)
      : participant_(std::move(p)), cancel_(cancel) {}
  std::shared_ptr<Participant> participant_;
  const std::atomic<bool>* cancel_;
  dds::Publisher* publisher_ = nullptr;
  dds::Subscriber* subscriber_ = nullptr;
  dds::DataWriter* writer_ = nullptr;
  dds::DataReader* reader_ = nullptr;
  dds::WaitSet waitset_;
};

class FastddsRequester final : public Requester {
 public:
  explicit FastddsRequester(std::unique_ptr<Endpoints> e, const std::atomic<bool>* cancel)
      : endpoints_(std::move(e)), cancel_(cancel) {}

  // A CDR sequence length is 32 bits; Fast DDS fragments anything above its transports' limits.
  std::uint64_t max_payload() const noexcept override { return std::numeric_limits<std::uint32_t>::max() - 64; }

  Status wait_for_responder(std::chrono::nanoseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!endpoints_->matched()) {
      if (cancel_ && cancel_->load()) return {ErrorCode::Interrupted, "interrupted"};
      if (std::chrono::steady_clock::now() >= deadline) {
        return {ErrorCode::Timeout, "Fast DDS: no responder matched the ping and pong topics within the timeout"};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Discovery is symmetric but not simultaneous: the responder may match our writer a moment
    // after we matched its reader, and a reliable reader drops data from a writer it does not know
    // yet (then waits a heartbeat period for the repair). Give its side time to catch up.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return {};
  }

  bool responder_present() const noexcept override { return endpoints_->reader_matched(); }

  Status prepare(std::size_t size, std::chrono::nanoseconds) override {
    if (size < kStampBytes || size > max_payload()) {
      return {ErrorCode::InvalidArgument, "request size " + std::to_string(size) + " is out of range"};
    }
    request_.resize(static_cast<std::uint32_t>(size));
    prepared_ = true;
    return {};
  }

  Status send(std::uint64_t stamp, std::chrono::nanoseconds) override {
    if (!prepared_) return {ErrorCode::InvalidArgument, "send without a prepared request"};
    prepared_ = false;
    std::memcpy(request_.buffer.get(), &stamp, kStampBytes);
    if (!endpoints_->write(request_)) return {ErrorCode::SystemError, "Fast DDS: the request could not be written"};
    return {};
  }

  Result<Reply> receive(std::chrono::nanoseconds timeout) override {
    for (;;) {
      Status got = endpoints_->take(reply_, timeout);
      if (!got.ok()) return got;
      if (reply_.size < kStampBytes) continue;  // not ours: the protocol's messages carry a stamp
      Reply reply;
      reply.arrived_ns = monotonic_ns();
      std::memcpy(&reply.stamp, reply_.buffer.get(), kStampBytes);
      return reply;
    }
  }

 private:
  std::unique_ptr<Endpoints> endpoints_;
  const std::atomic<bool>* cancel_;
  RawBytes request_;
  RawBytes reply_;
  bool prepared_ = false;
};

class FastddsResponder final : public Responder {
 public:
  FastddsResponder(std::unique_ptr<Endpoints> e, bool stop_on_request)
      : endpoints_(std::move(e)), stop_on_request_(stop_on_request) {}

  Status serve() override {
    for (;;) {
      Status got = endpoints_->take(message_, std::chrono::hours(24));
      if (got.code() == ErrorCode::Interrupted) return {};
      if (got.code() == ErrorCode::Timeout) continue;
      if (!got.ok()) return got;
      if (message_.size < kStampBytes) continue;
      std::uint64_t stamp = 0;
      std::memcpy(&stamp, message_.buffer.get(), kStampBytes);
      if (stamp == kStopStamp) {
        if (stop_on_request_) return {};
        continue;
      }
      // The reply is the request itself: same size, same stamp, nothing else written.
      if (!endpoints_->write(message_)) return {ErrorCode::SystemError, "Fast DDS: a reply could not be written"};
    }
  }

 private:
  std::unique_ptr<Endpoints> endpoints_;
  bool stop_on_request_;
  RawBytes message_;
};

}  // namespace

Result<std::unique_ptr<Requester>> make_fastdds_requester(const RequesterOptions& o) {
  auto e = Endpoints::create(o, request_topic(o.prefix), reply_topic(o.prefix));
  if (!e.ok()) return e.status();
  auto r = std::make_unique<FastddsRequester>(std::move(*e), o.cancel);
  return std::unique_ptr<Requester>(std::move(r));
}

Result<std::unique_ptr<Responder>> make_fastdds_responder(const ResponderOptions& o) {
  auto e = Endpoints::create(o, reply_topic(o.prefix), request_topic(o.prefix));
  if (!e.ok()) return e.status();
  return std::unique_ptr<Responder>(new FastddsResponder(std::move(*e), o.stop_on_request));
}

}  // namespace cerulion::measurement

// The plugin transport-fastdds.so: only a process that uses this transport loads Fast DDS.
CERULION_PLUGIN_TABLE(cerulion::measurement::TransportPlugin,
                      {&cerulion::measurement::make_fastdds_requester, &cerulion::measurement::make_fastdds_responder})
