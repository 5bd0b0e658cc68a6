// SPDX-License-Identifier: Apache-2.0
#include "exporter.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fastdds/rtps/common/InstanceHandle.h>
#include <fastdds/rtps/common/WriteParams.h>

#include "cerulion/core/detail/shm_header.hpp"
#include "cerulion/core/discovery.hpp"
#include "cerulion/ros2/cdr.hpp"
#include "dds_types.hpp"

namespace cerulion::bridge::detail {

namespace dds = eprosima::fastdds::dds;

namespace {
/// How long a new writer holds samples while no reader of another participant matches it: beyond
/// the discovery of a restarted bridge on a busy machine, which can take seconds. Then they go to
/// the writer, whose history keeps the last `depth` for readers that match later.
constexpr auto kExportHoldWithoutReader = std::chrono::seconds(5);
/// How long, once a remote reader matched and the first held samples were written, the writer
/// waits for their acknowledgment before it writes the rest anyway.
constexpr auto kExportProbeWait = std::chrono::milliseconds(500);
/// What a topic holds at most; beyond, the oldest go to the writer as they would have.
constexpr std::size_t kExportMaxHeldSamples = 4096;
constexpr std::size_t kExportMaxHeldBytes = std::size_t{64} << 20;
/// How long stopping waits, for all topics together, for remote readers to acknowledge what was
/// written (deleting a writer drops what it has not delivered).
constexpr auto kExportCloseWait = std::chrono::milliseconds(500);

/// The identity of a topic as the origin of its samples: the same for every bridge process that
/// exports it, different for another host, domain, topic or another life of the topic (whose
/// sequence numbers start again).
eprosima::fastrtps::rtps::GUID_t origin_of(const std::string& domain, const std::string& topic, std::uint64_t created_ns) {
  char host[256] = {};
  (void)::gethostname(host, sizeof host - 1);
  const std::uint32_t where = cerulion::detail::fnv1a(host, std::strlen(host));
  const std::uint32_t what = cerulion::detail::fnv1a(domain + '\0' + topic);
  eprosima::fastrtps::rtps::GUID_t origin;
  std::memcpy(origin.guidPrefix.value, &where, 4);
  std::memcpy(origin.guidPrefix.value + 4, &what, 4);
  std::memcpy(origin.guidPrefix.value + 8, &created_ns, 4);
  std::memcpy(origin.entityId.value, reinterpret_cast<const char*>(&created_ns) + 4, 4);
  return origin;
}

eprosima::fastrtps::Duration_t export_duration(std::chrono::nanoseconds d) {
  const auto ns = std::max<std::int64_t>(0, d.count());
  return {static_cast<std::int32_t>(ns / 1'000'000'000), static_cast<std::uint32_t>(ns % 1'000'000'000)};
}
}  // namespace

void Exporter::Topic::on_publication_matched(dds::DataWriter*, const dds::PublicationMatchedStatus& status) {
  // The bridge's own importing readers take nothing it writes: they are no reason to release.
  const auto reader = eprosima::fastrtps::rtps::iHandle2GUID(status.last_subscription_handle);
  if (participant->own(reader)) return;
  remote_readers.fetch_add(status.current_count_change, std::memory_order_relaxed);
}

void Exporter::on_topic(const recording::TopicDescription& topic) {
  std::lock_guard lock(mutex_);
  if (topics_.size() <= topic.index) topics_.resize(topic.index + 1);
  if (!topics_[topic.index]) {
    topics_[topic.index] = std::make_unique<Topic>();
    topics_[topic.index]->participant = &participant_;
  }
  Topic& t = *topics_[topic.index];
  t.name = topic.topic;
  t.type = topic.type;
  const auto info = inspect_topic(topic.topic, topic.domain);
  const std::uint64_t created = info.ok() ? info->created_realtime_ns : 0;
  t.origin = origin_of(topic.domain, topic.topic, created);
  t.older = created < started_ns_;
}

Exporter::Topic* Exporter::at(std::size_t index) const {
  std::lock_guard lock(mutex_);
  return index < topics_.size() ? topics_[index].get() : nullptr;
}

bool Exporter::open_writer(Topic& t) {
  t.wire = wire_for_topic(t.type);
  const std::string name = dds_topic_name(t.name);
  const auto announcement = announce_type(t.type, kMaxAnnouncementBytes, t.wire.type_hash);
  auto topic = participant_.topic(name, t.wire.dds_type);
  dds::DataWriter* writer = nullptr;
  std::string why;
  if (topic) {
    writer = participant_.publisher()->create_datawriter(*topic, participant_.writer_qos(announcement), &t,
                                                         dds::StatusMask::publication_matched());
    if (!writer) why = "Fast DDS cannot create a writer";
  } else {
    why = topic.message();
  }
  if (!writer) {
    t.unusable = true;
    recording::report(&events_, recording::EventKind::Problem, t.name, t.name + ": cannot export: " + why);
    return false;
  }
  t.writer = writer;
  t.opened = true;
  t.opened_at = std::chrono::steady_clock::now();
  recording::report(&events_, recording::EventKind::Info, t.name,
                    "exporting " + t.name + " as " + name + " (" + t.wire.dds_type + ")");
  if (read_type_announcement(announcement).type != t.type) {
    // Said here and by each importing bridge, which says what it makes of the topic without it.
    recording::report(&events_, recording::EventKind::Warning, t.name,
                      t.name + ": schema " + t.type.schema.name + " (" + t.type.schema.encoding + ", " +
                          std::to_string(t.type.schema.data.size()) + " B) does not fit the " +
                          std::to_string(kMaxAnnouncementBytes) + " B a DDS writer's discovery carries: bridges "
                          "that import " + t.name + " get it without the schema");
  }
  return true;
}

bool Exporter::on_sample(const recording::TappedSample& sample) {
  Topic* t = at(sample.topic_index);
  if (!t) return false;
  // What this bridge imported goes no further: that is what keeps two bridges from echoing.
  if (guard_.imported(t->name, sample.publisher_pid, sample.sequence)) return true;
  // What a ring held from before the bridge started, of a publisher gone since, is not resent: it
  // may be what a bridge of this domain before this one imported (a restart), which the guard
  // cannot know. A gap it leaves is the far side's to count.
  if (sample.publish_time < started_ns_ && ::kill(static_cast<pid_t>(sample.publisher_pid), 0) != 0 && errno == ESRCH) {
    return true;
  }
  std::lock_guard lock(t->mutex);
  if (!t->first_read) {
    // A topic older than the bridge is read from the oldest message its ring holds (a restarted
    // bridge resumes there); what went before is the far side's to count, by sequence number.
    t->first_read = true;
    if (t->older) t->history.store(sample.lost_before, std::memory_order_relaxed);
  }
  if (t->unusable || (!t->writer && !open_writer(*t))) return false;
  if (t->wire.type == WireType::Cdr && !ros2_ready(*t, sample)) return false;
  if (!t->direct) release(*t);
  if (t->direct) return write(*t, sample.sequence, sample.data);
  t->held.push_back({sample.sequence, {sample.data.begin(), sample.data.end()}});
  t->held_bytes += sample.data.size();
  while (!t->held.empty() && (t->held.size() > kExportMaxHeldSamples || t->held_bytes > kExportMaxHeldBytes)) {
    write_held(*t);
  }
  return true;
}

bool Exporter::ros2_ready(Topic& t, const recording::TappedSample& sample) {
  // ROS 2 nodes read XCDR1 little-endian only: anything else is not sent, and said once.
  const Status st = ros2::check_ros2_wire(sample.data);
  if (st.ok()) return true;
  if (!t.refused_said) {
    t.refused_said = true;
    recording::report(&events_, recording::EventKind::Problem, t.name,
                      t.name + ": message #" + std::to_string(sample.sequence) + " not exported (" + t.wire.ros_type +
                          "): " + st.message() + "; such messages are counted as lost");
  }
  return false;
}

bool Exporter::write(Topic& t, std::uint64_t sequence, std::span<const std::byte> data) {
  WireMessage message;
  message.outgoing = data;
  message.wire = t.wire.type;
  // DDS sequence numbers start at 1: the topic's own, from 0, go one up.
  eprosima::fastrtps::rtps::WriteParams params;
  params.related_sample_identity().writer_guid(t.origin);
  params.related_sample_identity().sequence_number(eprosima::fastrtps::rtps::SequenceNumber_t(sequence + 1));
  if (!t.writer->write(&message, params)) return false;
  t.messages.fetch_add(1, std::memory_order_relaxed);
  t.bytes.fetch_add(data.size(), std::memory_order_relaxed);
  return true;
}

void Exporter::write_held(Topic& t) {
  // The tap was told this one was taken: a write that fails is counted here.
  const auto& oldest = t.held.front();
  if (!write(t, oldest.sequence, oldest.data)) t.failed.fetch_add(1, std::memory_order_relaxed);
  t.held_bytes -= oldest.data.size();
  t.held.pop_front();
}

void Exporter::release(Topic& t) {
  if (t.direct || !t.writer) return;
  const auto now = std::chrono::steady_clock::now();
  if (t.remote_readers.load(std::memory_order_relaxed) <= 0) {
    if (now - t.opened_at < kExportHoldWithoutReader) return;
  } else {
    if (!t.probed) {
      // A history's depth, which the writer keeps until it is acknowledged: a reader that the
      // writer matched but that has not matched the writer yet still gets them.
      const auto depth = static_cast<std::size_t>(std::max(1, t.writer->get_qos().history().depth));
      for (std::size_t n = 0; n < depth && !t.held.empty(); ++n) write_held(t);
      t.probed = true;
      t.probed_at = now;
    }
    const bool acknowledged = t.writer->wait_for_acknowledgments(export_duration({})) == ReturnCode_t::RETCODE_OK;
    if (!acknowledged && now - t.probed_at < kExportProbeWait) return;
  }
  while (!t.held.empty()) write_held(t);
  t.direct = true;
}

void Exporter::service() {
  std::vector<Topic*> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& t : topics_)
      if (t) all.push_back(t.get());
  }
  for (Topic* t : all) {
    std::lock_guard lock(t->mutex);
    if (!t->unusable) release(*t);
  }
}

std::vector<BridgedTopic> Exporter::topics(const std::vector<recording::TopicCounts>& counts) const {
  std::vector<BridgedTopic> out;
  std::lock_guard lock(mutex_);
  for (const auto& t : topics_) {
    if (!t) continue;
    std::lock_guard topic_lock(t->mutex);
    if (!t->opened) continue;  // only imports of ours so far, or nothing yet
    BridgedTopic b;
    b.topic = t->name;
    b.dds_topic = dds_topic_name(t->name);
    b.dds_type = t->wire.dds_type;
    b.messages = t->messages.load();
    b.bytes = t->bytes.load();
    // Dropped by the sink are the failed writes of samples written as they came (held ones that
    // failed are counted by the topic); missed are what the tap could not read in time.
    // Missed but history (the older topic's messages before its ring) is not this bridge's loss.
    for (const auto& c : counts)
      if (c.topic == t->name) b.lost = c.missed - std::min(c.missed, t->history.load()) + c.dropped;
    b.lost += t->failed.load();
    if (t->writer) {
      dds::PublicationMatchedStatus matched{};
      t->writer->get_publication_matched_status(matched);
      b.peers = static_cast<std::uint32_t>(matched.current_count);
    }
    out.push_back(std::move(b));
  }
  // Topics that came and went before the taps could open them (the tap set's count of their
  // messages): nothing carried, all lost.
  for (const auto& c : counts) {
    if (c.missed == 0) continue;
    const bool shown = std::any_of(out.begin(), out.end(), [&](const BridgedTopic& b) { return b.topic == c.topic; });
    if (shown) continue;
    BridgedTopic b;
    b.topic = c.topic;
    b.dds_topic = dds_topic_name(c.topic);
    b.lost = c.missed + c.dropped;
    out.push_back(std::move(b));
  }
  return out;
}

void Exporter::close() {
  std::lock_guard lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + kExportCloseWait;
  for (auto& t : topics_) {
    if (!t) continue;
    std::lock_guard topic_lock(t->mutex);
    if (t->writer) {
      if (t->remote_readers.load(std::memory_order_relaxed) > 0) {
        while (!t->held.empty()) write_held(*t);
        (void)t->writer->wait_for_acknowledgments(export_duration(deadline - std::chrono::steady_clock::now()));
      } else {
        // Held for a reader that has not matched yet (a far bridge still discovering this one):
        // deleting the writer would drop them unsent, so they are lost, and counted.
        t->failed.fetch_add(t->held.size(), std::memory_order_relaxed);
      }
      t->writer->set_listener(nullptr);
      participant_.publisher()->delete_datawriter(t->writer);
    }
    t->held.clear();
    t->held_bytes = 0;
    t->writer = nullptr;
    t->unusable = true;
  }
}

}  // namespace cerulion::bridge::detail
