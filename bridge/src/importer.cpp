// SPDX-License-Identifier: Apache-2.0
#include "importer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cerulion/core/names.hpp"

namespace cerulion::bridge::detail {

namespace dds = eprosima::fastdds::dds;

namespace {
/// How long a local publish may wait for room on a lockstep topic before the message counts as
/// lost: a slow local reader never stalls DDS reception for long. Longer when lockstep was asked.
constexpr auto kPublishWait = std::chrono::milliseconds(100);
constexpr auto kLockstepPublishWait = std::chrono::seconds(1);
}  // namespace

void Importer::Topic::follow_sequence(const eprosima::fastrtps::rtps::GUID_t& writer, std::uint64_t sequence,
                                      bool durable) {
  auto [it, first] = last_sequence.try_emplace(writer, 0);
  // A sequence that goes back is a new writer of the same GUID (one made again in its process).
  if (first || sequence <= it->second) {
    // A writer's sequence starts at 1. Its earlier messages were meant for this reader when its
    // bridge started after the reader was made; otherwise they are history from before.
    const auto started = participant->started_ns(writer);
    const std::uint64_t since = durable_since_ns.load(std::memory_order_relaxed);
    const bool owed = durable && started && since != 0 && *started > since;
    it->second = owed ? 0 : sequence - 1;
  }
  if (sequence > it->second + 1) skipped.fetch_add(sequence - it->second - 1, std::memory_order_relaxed);
  it->second = sequence;
}

bool Importer::Topic::follow_origin(const dds::SampleInfo& info, bool durable) {
  const auto& writer = info.sample_identity.writer_guid();
  const auto sequence = static_cast<std::uint64_t>(info.sample_identity.sequence_number().to64long());
  const auto& origin = info.related_sample_identity;
  if (origin.writer_guid() == eprosima::fastrtps::rtps::GUID_t::unknown()) {
    follow_sequence(writer, sequence, durable);  // a writer that says no origin (ROS 2, an older bridge)
    return true;
  }
  origins.store(true, std::memory_order_relaxed);
  const auto at_origin = static_cast<std::uint64_t>(origin.sequence_number().to64long());
  auto [it, first] = last_origin_sequence.try_emplace(origin.writer_guid(), 0);
  if (first) {
    // The first of its origin: what its writer owes before it, as for any writer.
    follow_sequence(writer, sequence, durable);
  } else if (at_origin <= it->second) {
    return false;
  } else if (at_origin > it->second + 1) {
    skipped.fetch_add(at_origin - it->second - 1, std::memory_order_relaxed);
  }
  it->second = at_origin;
  return true;
}

void Importer::Topic::on_data_available(dds::DataReader* r) {
  // One listener call at a time (shared memory and UDP have their own threads): the message buffer
  // is the topic's.
  std::lock_guard serial(receiving);
  // Told by its QoS rather than by the pointer, which may not be stored yet on the first call.
  const bool volatile_reader = r->get_qos().durability().kind == dds::VOLATILE_DURABILITY_QOS;
  dds::SampleInfo info;
  while (r->take_next_sample(&message, &info) == ReturnCode_t::RETCODE_OK) {
    if (!info.valid_data) continue;
    const auto& writer = info.sample_identity.writer_guid();
    // Our own writer on the same topic (a topic both exported and imported) is not an import.
    if (participant->own(writer)) continue;
    // A durable writer's samples come through the durable reader.
    if (volatile_reader && participant->durable_writer(writer)) continue;
    if (!follow_origin(info, !volatile_reader)) continue;
    const auto unwrapped = read_cdr(wire.type, message.cdr());
    if (!unwrapped) {
      failed.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const auto payload = *unwrapped;
    // The loan waits for room (lockstep) outside the guard's lock, so the export side, which
    // takes that lock to check a sample, is never what keeps room from being made.
    auto loan = publisher->loan(payload.size(), publish_wait);
    if (!loan) {
      failed.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (!payload.empty()) std::memcpy(loan->data().data(), payload.data(), payload.size());
    std::lock_guard lock(guard->mutex);
    auto seq = publisher->publish(std::move(*loan), publish_wait);
    if (!seq) {
      failed.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    guard->remember(*seq);
    messages.fetch_add(1, std::memory_order_relaxed);
    bytes.fetch_add(payload.size(), std::memory_order_relaxed);
  }
}

std::optional<TopicType> Importer::imported_type(const Topic& t, const TypeAnnouncement& announced) {
  if (t.wire.type == WireType::Cdr) return ros2_type(t, announced);
  // A type that does not travel as this wire type is not what the writer sends: not a bridge's.
  if (announced.type.raw() || wire_type_for(announced.type) != t.wire.type) return std::nullopt;
  std::optional<TopicType> type;
  std::string why;
  if (Status st = check_topic_type(announced.type); st.ok()) {
    type = announced.type;
  } else if (check_topic_type(TopicType{announced.type.message_encoding, {}}).ok()) {
    type = TopicType{announced.type.message_encoding, {}};
    why = st.message();
  } else {
    why = st.message();
  }
  if (!announced.omitted.empty()) {
    why = "the exporting bridge left out its schema " + announced.omitted.name + " (" + announced.omitted.encoding +
          ", " + std::to_string(announced.omitted_bytes) + " B), larger than a DDS writer's discovery carries";
  }
  if (!why.empty()) {
    recording::report(&events_, recording::EventKind::Warning, t.name,
                      t.name + ": " + why + ": imported as " + (type ? describe(*type) : std::string("raw bytes")));
  }
  return type;
}

Status Importer::open_publisher(Topic& t, const TypeAnnouncement& announced) {
  // A topic the bridge creates runs free: a slow local reader loses messages (counted) rather than
  // holding DDS reception back; lockstep when asked, so that local readers lose nothing either.
  // A topic from another bridge keeps its type, schema included.
  PublisherOptions o;
  o.topic.domain = domain_;
  if (!lockstep_) o.topic.mode = Mode::FreeRun;
  t.publish_wait = lockstep_ ? std::chrono::milliseconds(kLockstepPublishWait) : kPublishWait;
  o.topic.type = imported_type(t, announced);
  auto pub = Publisher::create(t.name, o);
  if (!pub && pub.code() == ErrorCode::Incompatible) {
    // The topic exists with its own settings (lockstep, another type): join it as it is.
    o.topic.mode.reset();
    o.topic.type.reset();
    pub = Publisher::create(t.name, o);
  }
  if (!pub) return Status(pub.code(), "cannot publish locally: " + pub.message());
  t.publisher.emplace(std::move(*pub));
  return {};
}

Status Importer::open_reader(Topic& t, bool durable) {
  (durable ? t.durable_tried : t.volatile_tried) = true;
  auto topic = participant_.topic(t.dds_topic, t.wire.dds_type);
  if (!topic) return topic.status();
  // Before the reader exists: its listener may run before create_datareader() returns.
  if (durable) t.durable_since_ns.store(realtime_ns(), std::memory_order_relaxed);
  auto* reader = participant_.subscriber()->create_datareader(*topic, participant_.reader_qos(durable), &t,
                                                              dds::StatusMask::data_available());
  if (!reader) return Status(ErrorCode::SystemError, "Fast DDS cannot create a reader");
  (durable ? t.durable_reader : t.volatile_reader) = reader;

  return {};
}

void Importer::discovered(const DiscoveredWriter& writer) {
  if (writer.removed) return;  // an imported topic stays while the bridge runs
  auto wire = wire_for_dds_type(writer.dds_type);
  if (!wire) return;
  // A bridge exporting a ROS 2 type that is also a wrapper's (std_msgs/msg/String) sends it whole.
  if (wire->type != WireType::Cdr && wire_for_topic(writer.announced.type).type == WireType::Cdr) {
    wire->type = WireType::Cdr;
    wire->ros_type = wire_for_topic(writer.announced.type).ros_type;
  }
  const auto local = local_topic_name(writer.dds_topic);
  if (!local) return;
  std::lock_guard lock(mutex_);
  auto it = topics_.find(writer.dds_topic);
  if (it == topics_.end()) {
    auto name = normalize_topic_name(*local);
    if (!name) {
      recording::report(&events_, recording::EventKind::Problem, *local, writer.dds_topic + ": cannot import: " + name.message());
      topics_[writer.dds_topic] = nullptr;  // said once
      return;
    }
    if (!matcher_.matches(*name)) return;
    auto t = std::make_unique<Topic>();
    t->name = *name;
    t->dds_topic = writer.dds_topic;
    t->wire = *wire;
    t->participant = &participant_;
    t->guard = &guard_.entry(*name);
    if (Status st = open_publisher(*t, writer.announced); !st.ok()) {
      recording::report(&events_, recording::EventKind::Problem, *name, *name + ": cannot import: " + st.message());
      topics_[writer.dds_topic] = nullptr;
      return;
    }
    recording::report(&events_, recording::EventKind::Info, *name,
                      "importing " + writer.dds_topic + " as " + *name + " (" + wire->dds_type + ")");
    it = topics_.emplace(writer.dds_topic, std::move(t)).first;
  }
  Topic* t = it->second.get();
  // A writer of another type on a topic already imported is not read (the topic has one type).
  if (!t || wire->dds_type != t->wire.dds_type || (writer.durable ? t->durable_tried : t->volatile_tried)) return;
  if (Status st = open_reader(*t, writer.durable); !st.ok()) {
    recording::report(&events_, recording::EventKind::Problem, t->name,
                      t->name + ": cannot import from " + (writer.durable ? "durable" : "volatile") +
                          " writers: " + st.message());
  }
}

std::vector<BridgedTopic> Importer::topics() const {
  std::vector<BridgedTopic> out;
  std::lock_guard lock(mutex_);
  for (const auto& [dds_topic, t] : topics_) {
    if (!t || !t->publisher) continue;
    if (t->durable_reader || t->volatile_reader) {
      std::uint64_t dds_lost = 0;
      std::uint32_t peers = 0;
      for (auto* reader : {t->durable_reader, t->volatile_reader}) {
        if (!reader) continue;
        dds::SampleLostStatus lost{};
        dds::SampleRejectedStatus rejected{};
        reader->get_sample_lost_status(lost);
        reader->get_sample_rejected_status(rejected);
        dds_lost += static_cast<std::uint64_t>(lost.total_count) + rejected.total_count;
        dds::SubscriptionMatchedStatus matched{};
        reader->get_subscription_matched_status(matched);
        // The volatile reader matches every writer, the durable one the durable writers only.
        peers = std::max(peers, static_cast<std::uint32_t>(matched.current_count));
      }
      t->dds_lost = dds_lost;
      t->peers = peers;
    }
    BridgedTopic b;
    b.topic = t->name;
    b.dds_topic = dds_topic;
    b.dds_type = t->wire.dds_type;
    b.imported = true;
    b.messages = t->messages.load();
    b.bytes = t->bytes.load();
    // DDS's count and the sequences' see the same losses (a GAP DDS counts is a hole in the
    // sequence too): the larger is what was lost.
    b.lost = (t->origins.load() ? t->skipped.load() : std::max(t->dds_lost, t->skipped.load())) + t->failed.load();
    b.peers = t->peers;
    out.push_back(std::move(b));
  }
  return out;
}

void Importer::close() {
  std::lock_guard lock(mutex_);
  for (auto& [name, t] : topics_) {
    if (!t) continue;
    for (auto** reader : {&t->durable_reader, &t->volatile_reader}) {
      if (!*reader) continue;
      (*reader)->set_listener(nullptr);
      participant_.subscriber()->delete_datareader(*reader);
      *reader = nullptr;
    }
    t->peers = 0;
  }
}

}  // namespace cerulion::bridge::detail
