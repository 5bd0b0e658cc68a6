// SPDX-License-Identifier: Apache-2.0
// Transports: shared memory with a segment large enough for a 16 MiB message (the default 512 KiB
// makes large messages lose fragments and wait for NACK repair: ~100-250 ms at 16 MiB in the bench
// lane, ~14 ms with 64 MiB), and UDPv4 with larger socket buffers for other machines. QoS: ROS 2's
// defaults (reliable, keep last 10) but transient local, so that a reader matching late still gets
// a new topic's first messages; synchronous publication as rmw_fastrtps does. The participant's
// user data says when it started, so that an importing bridge knows whether a writer's first
// messages were meant for it (a bridge restarted while it ran) or were history before it came.

#include "participant.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <string_view>

#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include "dds_types.hpp"

namespace cerulion::bridge::detail {

namespace dds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

namespace {

/// How long a removed durable writer stays known: its last samples may still be in a reader's
/// queue when the removal is reported.
constexpr auto kRemovedWriterKept = std::chrono::seconds(10);

/// Fast DDS makes a participant's GUID of the process's and the lowest free participant id, so a
/// bridge created again in the same process would take its predecessor's GUID, and its writers
/// theirs: a reader that has not yet seen the old writer go takes the new one's first samples for
/// repeats of the old one's and drops them. So each bridge participant after the process's first
/// gets a GUID of its own: the first's process part, then a mark and a count where the id goes.
struct BridgePrefixes {
  std::mutex mutex;
  std::optional<rtps::GuidPrefix_t> first;
  std::uint32_t made = 0;
};
BridgePrefixes& bridge_prefixes() {
  static BridgePrefixes prefixes;
  return prefixes;
}
constexpr rtps::octet kOwnPrefixMark = 0xce;

/// The participant's user data: "cerulion.started=<realtime ns>".
constexpr std::string_view kStartedKey = "cerulion.started=";

std::optional<std::uint64_t> read_started(const std::vector<rtps::octet>& user_data) {
  const std::string_view text(reinterpret_cast<const char*>(user_data.data()), user_data.size());
  if (!text.starts_with(kStartedKey)) return std::nullopt;
  std::uint64_t ns = 0;
  const auto* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data() + kStartedKey.size(), end, ns);
  if (parsed.ec != std::errc{} || parsed.ptr != end) return std::nullopt;
  return ns;
}

std::string peer_name(const rtps::ParticipantProxyData& data) {
  std::string name = data.m_participantName.to_string();
  if (!name.empty()) return name;
  std::ostringstream guid;
  guid << data.m_guid;
  return guid.str();
}

}  // namespace

Result<std::unique_ptr<Participant>> Participant::create(const BridgeOptions& options) {
  auto self = std::unique_ptr<Participant>(new Participant(options));
  auto* factory = dds::DomainParticipantFactory::get_instance();
  dds::DomainParticipantQos qos = factory->get_default_participant_qos();
  qos.name("cerulion_bridge/" + options.domain);
  const std::string started = std::string(kStartedKey) + std::to_string(realtime_ns());
  qos.user_data().data_vec(std::vector<rtps::octet>(started.begin(), started.end()));
  qos.transport().use_builtin_transports = false;
  if (options.shared_memory) {
    auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
    shm->segment_size(options.shm_segment_bytes);
    qos.transport().user_transports.push_back(shm);
  }
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  udp->sendBufferSize = options.udp_buffer_bytes;
  udp->receiveBufferSize = options.udp_buffer_bytes;
  qos.transport().user_transports.push_back(udp);
  qos.transport().send_socket_buffer_size = options.udp_buffer_bytes;
  qos.transport().listen_socket_buffer_size = options.udp_buffer_bytes;

  {
    auto& prefixes = bridge_prefixes();
    std::lock_guard lock(prefixes.mutex);
    if (prefixes.first) {
      rtps::GuidPrefix_t prefix = *prefixes.first;
      const std::uint32_t n = ++prefixes.made;
      prefix.value[8] = kOwnPrefixMark;
      prefix.value[9] = static_cast<rtps::octet>(n >> 16);
      prefix.value[10] = static_cast<rtps::octet>(n >> 8);
      prefix.value[11] = static_cast<rtps::octet>(n);
      qos.wire_protocol().prefix = prefix;
    }
  }
  // The participant starts discovering at once: the listener must be ready before creation.
  self->participant_ = factory->create_participant(static_cast<dds::DomainId_t>(options.dds_domain), qos, self.get(),
                                                   dds::StatusMask::none());
  if (!self->participant_) {
    return Status{ErrorCode::SystemError,
                  "Fast DDS cannot join DDS domain " + std::to_string(options.dds_domain)};
  }
  self->prefix_ = self->participant_->guid().guidPrefix;
  {
    auto& prefixes = bridge_prefixes();
    std::lock_guard lock(prefixes.mutex);
    if (!prefixes.first) prefixes.first = self->prefix_;
  }
  self->publisher_ = self->participant_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
  self->subscriber_ = self->participant_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
  if (!self->publisher_ || !self->subscriber_) {
    return Status{ErrorCode::SystemError, "Fast DDS cannot create a publisher or subscriber"};
  }
  return self;
}

Participant::~Participant() {
  if (!participant_) return;
  participant_->set_listener(nullptr);
  participant_->delete_contained_entities();
  dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
}

bool Participant::own(const rtps::GUID_t& writer) const noexcept { return writer.guidPrefix == prefix_; }

Result<dds::Topic*> Participant::topic(const std::string& name, const std::string& type_name) {
  std::lock_guard lock(topics_mutex_);
  if (!participant_->find_type(type_name).get()) {
    dds::TypeSupport support(new WireTopicType(type_name));
    if (support.register_type(participant_) != ReturnCode_t::RETCODE_OK) {
      return Status{ErrorCode::SystemError, "Fast DDS cannot register type " + type_name};
    }
  }
  if (auto* d = participant_->lookup_topicdescription(name)) {
    if (d->get_type_name() != type_name) {
      return Status{ErrorCode::Incompatible, "DDS topic " + name + " is already bridged as " + d->get_type_name() +
                                                 ", not " + type_name};
    }
    return static_cast<dds::Topic*>(d);
  }
  dds::Topic* t = participant_->create_topic(name, type_name, dds::TOPIC_QOS_DEFAULT);
  if (!t) return Status{ErrorCode::SystemError, "Fast DDS cannot create topic " + name};
  return t;
}

dds::DataWriterQos Participant::writer_qos(const std::vector<unsigned char>& user_data) const {
  dds::DataWriterQos q = publisher_->get_default_datawriter_qos();
  q.reliability().kind = options_.reliable ? dds::RELIABLE_RELIABILITY_QOS : dds::BEST_EFFORT_RELIABILITY_QOS;
  q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
  q.history().depth = static_cast<std::int32_t>(options_.depth);
  q.durability().kind = dds::TRANSIENT_LOCAL_DURABILITY_QOS;
  q.publish_mode().kind = dds::SYNCHRONOUS_PUBLISH_MODE;
  // Readers acknowledge in answer to heartbeats: sent often, a new writer learns soon that a new
  // reader has its first samples (the exporter holds the rest until then), and a lost sample is
  // asked for again while the keep-last history still has it. Heartbeats stop once all is
  // acknowledged.
  q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 100'000'000);
  q.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  q.data_sharing().off();
  if (!user_data.empty()) q.user_data().data_vec(user_data);
  return q;
}

dds::DataReaderQos Participant::reader_qos(bool durable) const {
  dds::DataReaderQos q = subscriber_->get_default_datareader_qos();
  q.reliability().kind = options_.reliable ? dds::RELIABLE_RELIABILITY_QOS : dds::BEST_EFFORT_RELIABILITY_QOS;
  q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
  q.history().depth = static_cast<std::int32_t>(options_.depth);
  q.durability().kind = durable ? dds::TRANSIENT_LOCAL_DURABILITY_QOS : dds::VOLATILE_DURABILITY_QOS;
  q.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  q.data_sharing().off();
  return q;
}

std::vector<DiscoveredWriter> Participant::take_discoveries() {
  std::lock_guard lock(mutex_);
  return std::exchange(discoveries_, {});
}

std::vector<std::string> Participant::remote_participants() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [prefix, name] : peers_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void Participant::on_participant_discovery(dds::DomainParticipant*, rtps::ParticipantDiscoveryInfo&& info) {
  const auto& prefix = info.info.m_guid.guidPrefix;
  if (prefix == prefix_) return;
  std::lock_guard lock(mutex_);
  auto known = std::find_if(peers_.begin(), peers_.end(), [&](const auto& p) { return p.first == prefix; });
  switch (info.status) {
    case rtps::ParticipantDiscoveryInfo::DISCOVERED_PARTICIPANT:
    case rtps::ParticipantDiscoveryInfo::CHANGED_QOS_PARTICIPANT:
      if (known == peers_.end()) peers_.emplace_back(prefix, peer_name(info.info));
      if (auto started = read_started(info.info.m_userData.data_vec())) started_[prefix] = *started;
      break;
    default:  // removed, dropped (lease expired: a bridge killed with -9), ignored
      if (known != peers_.end()) peers_.erase(known);
      break;
  }
}

std::optional<std::uint64_t> Participant::started_ns(const rtps::GUID_t& writer) const {
  std::lock_guard lock(mutex_);
  auto it = started_.find(writer.guidPrefix);
  if (it == started_.end()) return std::nullopt;
  return it->second;
}

bool Participant::durable_writer(const rtps::GUID_t& writer) const {
  std::lock_guard lock(mutex_);
  return durable_.count(writer) > 0;
}

void Participant::on_publisher_discovery(dds::DomainParticipant*, rtps::WriterDiscoveryInfo&& info) {
  const rtps::GUID_t guid = info.info.guid();
  if (guid.guidPrefix == prefix_) return;
  DiscoveredWriter w;
  w.dds_topic = info.info.topicName().to_string();
  w.dds_type = info.info.typeName().to_string();
  w.durable = info.info.m_qos.m_durability.kind != dds::VOLATILE_DURABILITY_QOS;
  w.removed = info.status == rtps::WriterDiscoveryInfo::REMOVED_WRITER;
  w.announced = read_type_announcement(info.info.m_qos.m_userData.data_vec());
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  std::erase_if(durable_, [&](const auto& d) { return d.second && now - *d.second > kRemovedWriterKept; });
  if (w.removed) {
    if (auto it = durable_.find(guid); it != durable_.end()) it->second = now;
  } else if (w.durable) {
    durable_[guid].reset();
  }
  discoveries_.push_back(std::move(w));
}

}  // namespace cerulion::bridge::detail
