// SPDX-License-Identifier: Apache-2.0
#include "exporter.hpp"

#include "dds_types.hpp"

namespace cerulion::bridge::detail {

namespace dds = eprosima::fastdds::dds;

void Exporter::on_topic(const recording::TopicDescription& topic) {
  std::lock_guard lock(mutex_);
  if (topics_.size() <= topic.index) topics_.resize(topic.index + 1);
  if (!topics_[topic.index]) topics_[topic.index] = std::make_unique<Topic>();
  topics_[topic.index]->name = topic.topic;
  topics_[topic.index]->type = topic.type;
}

Exporter::Topic* Exporter::at(std::size_t index) const {
  std::lock_guard lock(mutex_);
  return index < topics_.size() ? topics_[index].get() : nullptr;
}

bool Exporter::open_writer(Topic& t) {
  const WireType wire = wire_type_for(t.type);
  const std::string name = dds_topic_name(t.name);
  const auto announcement = announce_type(t.type);
  auto topic = participant_.topic(name, wire);
  dds::DataWriter* writer = nullptr;
  std::string why;
  if (topic) {
    writer = participant_.publisher()->create_datawriter(*topic, participant_.writer_qos(announcement));
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
  recording::report(&events_, recording::EventKind::Info, t.name,
                    "exporting " + t.name + " as " + name + " (" + std::string(dds_type_name(wire)) + ")");
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
  std::lock_guard lock(t->mutex);
  if (t->unusable || (!t->writer && !open_writer(*t))) return false;
  WireMessage message;
  message.outgoing = sample.data;
  if (!t->writer->write(&message)) {
    t->failed.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  t->messages.fetch_add(1, std::memory_order_relaxed);
  t->bytes.fetch_add(sample.data.size(), std::memory_order_relaxed);
  return true;
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
    b.dds_type = std::string(dds_type_name(wire_type_for(t->type)));
    b.messages = t->messages.load();
    b.bytes = t->bytes.load();
    // Dropped by the sink are the failed writes; missed are what the tap could not read in time.
    for (const auto& c : counts)
      if (c.topic == t->name) b.lost = c.missed + c.dropped;
    if (t->writer) {
      dds::PublicationMatchedStatus matched{};
      t->writer->get_publication_matched_status(matched);
      b.peers = static_cast<std::uint32_t>(matched.current_count);
    }
    out.push_back(std::move(b));
  }
  return out;
}

void Exporter::close() {
  std::lock_guard lock(mutex_);
  for (auto& t : topics_) {
    if (!t) continue;
    std::lock_guard topic_lock(t->mutex);
    if (t->writer) participant_.publisher()->delete_datawriter(t->writer);
    t->writer = nullptr;
    t->unusable = true;
  }
}

}  // namespace cerulion::bridge::detail
