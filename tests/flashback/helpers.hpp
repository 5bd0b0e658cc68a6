// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared helpers of the flashback tests: a store of a test's own domain (removed afterwards),
// messages with checkable payloads, and dumps read back from memory (with each topic's type).

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/sink.hpp"
#include "process.hpp"
#include "require_ok.hpp"

namespace fbtest {

using namespace cerulion;

using test::requireOk;

/// A domain of the test's own, whose stores are removed when it ends.
struct TestDomain {
  std::string name = test::unique_domain("fb");
  ~TestDomain() {
    for (const auto& s : flashback::list_stores(name)) ::unlink(s.path.c_str());
  }
};

/// A keeper's options for every topic of `domain`, with a store of `memory_bytes`.
inline flashback::KeeperOptions keeper_of_all(const TestDomain& domain, std::uint64_t memory_bytes = 16 << 20) {
  flashback::KeeperOptions options;
  options.domain = domain.name;
  options.selection.all = true;
  options.limits.memory_bytes = memory_bytes;
  return options;
}

/// Payload of message `sequence`: its number, then bytes derived from it (incompressible when
/// `random`), `size` bytes in all.
inline std::vector<std::byte> payload(std::uint64_t sequence, std::size_t size, bool random = false) {
  std::vector<std::byte> out(size);
  std::mt19937_64 rng(sequence);
  for (std::size_t i = 0; i < size; ++i) {
    out[i] = static_cast<std::byte>(i < 8 ? (sequence >> (8 * i)) & 0xff : random ? rng() & 0xff : (sequence + i) % 7);
  }
  return out;
}

struct DumpedMessage {
  std::string topic;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::vector<std::byte> data;
};

struct ReadDump {
  std::vector<DumpedMessage> messages;
  std::vector<recorder::Metadata> metadata;
  std::vector<std::string> problems;
  flashback::DumpSummary summary;
  std::map<std::string, TopicType> types;  ///< by topic, as the channels say
  std::size_t schema_records = 0;
};

/// Reads a dump's bytes back, checking every CRC on the way (its summary left empty).
inline ReadDump read_dump(std::span<const std::byte> file) {
  ReadDump out;
  requireOk(recorder::stream_records_memory(file, [](const recorder::Record&) { return true; }, &out.problems));
  auto reader = recorder::Reader::open_memory(file);
  requireOk(reader.status());
  const auto& schemas = reader->summary().schemas;
  out.schema_records = schemas.size();
  for (const auto& [id, ch] : reader->summary().channels) {
    auto schema = schemas.find(ch.schema_id);
    out.types[ch.topic] = recorder::profile::topic_type(ch, schema == schemas.end() ? nullptr : &schema->second);
  }
  recorder::ReadMessagesOptions in_file_order;
  in_file_order.order = recorder::ReadOrder::File;
  requireOk(reader->read_messages(in_file_order, [&](const recorder::MessageView& m) {
    out.messages.push_back({m.channel.topic, m.message.sequence, m.message.log_time, m.message.data});
    return true;
  }));
  for (const auto& p : reader->problems()) out.problems.push_back(p);
  auto md = reader->read_metadata();
  requireOk(md.status());
  out.metadata = *md;
  return out;
}

/// Dumps into memory and reads the file back, checking every CRC on the way.
inline ReadDump dump_and_read(const flashback::Store& store, const flashback::DumpOptions& options = {}) {
  recorder::ByteVector file;
  auto dumped = flashback::dump(store, std::make_unique<recorder::MemorySink>(file), options);
  requireOk(dumped.status());
  ReadDump out = read_dump(file);
  out.summary = *dumped;
  return out;
}

/// A dump file read back, checking every CRC on the way (summary left empty).
inline ReadDump read_dump_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_dump(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

/// Per topic, the messages missing between consecutive ones of a dump (sequence gaps).
inline std::map<std::string, std::uint64_t> sequence_gaps(const ReadDump& dump) {
  std::map<std::string, std::uint64_t> gaps;
  std::map<std::string, std::uint32_t> last;
  for (const auto& m : dump.messages) {
    auto it = last.find(m.topic);
    gaps[m.topic] += it == last.end() ? 0 : static_cast<std::uint32_t>(m.sequence - it->second - 1);
    last[m.topic] = m.sequence;
  }
  return gaps;
}

/// A per-topic count of a dump's metadata ("messages" or "lost"), 0 when absent.
inline std::uint64_t dump_count(const ReadDump& dump, const std::string& what, const std::string& topic) {
  if (dump.metadata.empty()) return 0;
  auto it = dump.metadata.front().metadata.find(what + ":" + topic);
  return it == dump.metadata.front().metadata.end() ? 0 : std::stoull(it->second);
}

/// A store's counters of `topic`.
inline flashback::TopicStatus topic_status(const flashback::StoreStatus& status, const std::string& topic) {
  for (const auto& t : status.topics) {
    if (t.topic == topic) return t;
  }
  return {};
}

/// A publisher of `topic` in `domain`; a new topic gets `mode` and `depth` when they are given.
inline Publisher open_publisher(const std::string& domain, const std::string& topic,
                                std::optional<Mode> mode = std::nullopt,
                                std::optional<std::uint32_t> depth = std::nullopt) {
  PublisherOptions options;
  options.topic.domain = domain;
  options.topic.mode = mode;
  options.topic.depth = depth;
  auto publisher = Publisher::create(topic, options);
  requireOk(publisher.status());
  return std::move(*publisher);
}

}  // namespace fbtest
