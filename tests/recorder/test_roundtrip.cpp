// SPDX-License-Identifier: Apache-2.0
// Writer -> reader round trips: every payload comes back byte for byte, the summary adds up, and
// the file passes the streaming reader's checks.

#include <catch2/catch.hpp>

#include <random>

#include <lz4frame.h>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"
#include "records.hpp"
#include "wire.hpp"

using namespace rectest;

namespace {

struct Sent {
  std::string topic;
  std::uint32_t sequence;
  std::uint64_t log_time;
  ByteVector data;
};

std::vector<Sent> make_messages(std::size_t n, bool random) {
  std::mt19937_64 rng(42);
  std::vector<Sent> out;
  const char* topics[] = {"/imu", "/camera/front", "/cmd_vel"};
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t size = (i % 7 == 0) ? 0 : (rng() % 3000);
    ByteVector data(size);
    for (std::size_t k = 0; k < size; ++k) data[k] = static_cast<std::byte>(random ? rng() : (k % 13));
    out.push_back({topics[i % 3], static_cast<std::uint32_t>(i), 1'000'000'000ull + i * 1000, std::move(data)});
  }
  return out;
}

void write_file(const std::string& path, const std::vector<Sent>& msgs, WriterOptions options) {
  auto w = Writer::create(path, options);
  REQUIRE(w.ok());
  auto schema = w->add_schema("Imu", "jsonschema", bytes_of("{}"));
  REQUIRE(schema.ok());
  std::map<std::string, std::uint16_t> ids;
  for (const auto& m : msgs) {
    if (!ids.count(m.topic)) {
      auto id = w->add_channel(m.topic, "cdr", *schema, {{"depth", "16"}});
      REQUIRE(id.ok());
      ids[m.topic] = *id;
    }
    REQUIRE(w->write(ids[m.topic], m.sequence, m.log_time, m.log_time - 5, m.data).ok());
  }
  REQUIRE(w->write_metadata({"cerulion", {{"host", "test"}}}).ok());
  REQUIRE(w->write_attachment({5, 6, "notes.txt", "text/plain", bytes_of("hello"), 0}).ok());
  REQUIRE(w->close().ok());
}

void check_read_back(const std::string& path, const std::vector<Sent>& msgs) {
  auto r = Reader::open(path);
  REQUIRE(r.ok());
  CHECK(r->summary().finalized);
  CHECK(r->summary().indexed);
  CHECK(r->problems().empty());
  CHECK(r->summary().statistics.message_count == msgs.size());
  std::size_t i = 0;
  bool same = true;
  Status st = r->read_messages({}, [&](const MessageView& m) {
    if (i >= msgs.size() || m.channel.topic != msgs[i].topic || m.message.data != msgs[i].data ||
        m.message.sequence != msgs[i].sequence || m.message.log_time != msgs[i].log_time ||
        m.message.publish_time != msgs[i].log_time - 5 || !m.schema || m.schema->name != "Imu") {
      same = false;
    }
    ++i;
    return true;
  });
  CHECK(st.ok());
  CHECK(i == msgs.size());
  CHECK(same);
  auto md = r->read_metadata();
  REQUIRE(md.ok());
  REQUIRE(md->size() == 1);
  CHECK(md->at(0).metadata.at("host") == "test");
  auto at = r->read_attachments();
  REQUIRE(at.ok());
  REQUIRE(at->size() == 1);
  CHECK(at->at(0).data == bytes_of("hello"));
  // The streaming reader checks every CRC and the file's structure.
  std::vector<std::string> problems;
  std::size_t streamed = 0;
  CHECK(stream_records(path, [&](const Record& rec) {
          streamed += std::holds_alternative<Message>(rec);
          return true;
        }, &problems).ok());
  CHECK(problems.empty());
  CHECK(streamed == msgs.size());
}

}  // namespace

TEST_CASE("Messages written come back byte for byte in every chunk mode", "[recorder][roundtrip]") {
  auto msgs = make_messages(3000, false);
  WriterOptions options;
  options.chunk_size = 64 * 1024;
  SECTION("zstd chunks") {
    options.compression = Compression::Zstd;
    auto path = temp_path("zstd.mcap");
    write_file(path, msgs, options);
    check_read_back(path, msgs);
    auto r = Reader::open(path);
    REQUIRE(r.ok());
    CHECK(r->summary().chunk_indexes.size() > 10);
    for (const auto& ci : r->summary().chunk_indexes) CHECK(ci.compression == "zstd");
  }
  SECTION("uncompressed chunks") {
    options.compression = Compression::None;
    auto path = temp_path("none.mcap");
    write_file(path, msgs, options);
    check_read_back(path, msgs);
    auto r = Reader::open(path);
    REQUIRE(r.ok());
    for (const auto& ci : r->summary().chunk_indexes) CHECK(ci.compression.empty());
  }
  SECTION("random payloads that do not shrink are stored uncompressed") {
    auto random = make_messages(300, true);
    auto path = temp_path("random.mcap");
    write_file(path, random, options);
    check_read_back(path, random);
    auto r = Reader::open(path);
    REQUIRE(r.ok());
    for (const auto& ci : r->summary().chunk_indexes) CHECK(ci.compression.empty());
  }
  SECTION("lz4 chunks written by another tool are read") {
    // Build a file by hand with one lz4-frame chunk, as other MCAP writers make them.
    ByteVector chunk_records;
    detail::append_record(chunk_records, Schema{1, "S", "x", bytes_of("s")});
    detail::append_record(chunk_records, Channel{3, 1, "/lz", "cdr", {}});
    for (std::uint32_t i = 0; i < 100; ++i) {
      detail::append_record(chunk_records, Message{3, i, 10 + i, 10 + i, bytes_of(std::string(200, 'a' + i % 26))});
    }
    ByteVector lz(LZ4F_compressFrameBound(chunk_records.size(), nullptr));
    std::size_t n = LZ4F_compressFrame(lz.data(), lz.size(), chunk_records.data(), chunk_records.size(), nullptr);
    REQUIRE_FALSE(LZ4F_isError(n));
    lz.resize(n);
    ByteVector out;
    out.assign(reinterpret_cast<const std::byte*>(kMagic), reinterpret_cast<const std::byte*>(kMagic) + 8);
    detail::append_record(out, Header{"", "hand"});
    ChunkInfo info{10, 109, chunk_records.size(), detail::crc32_of(chunk_records), "lz4", 0, 0, 0};
    detail::append_chunk(out, info, lz);
    detail::append_record(out, DataEnd{0});
    detail::append_record(out, Footer{0, 0, 0});
    out.insert(out.end(), reinterpret_cast<const std::byte*>(kMagic), reinterpret_cast<const std::byte*>(kMagic) + 8);
    auto r = Reader::open_memory(out);
    REQUIRE(r.ok());
    CHECK(r->problems().empty());
    std::uint32_t count = 0;
    bool same = true;
    CHECK(r->read_messages({}, [&](const MessageView& m) {
            same = same && m.message.data == bytes_of(std::string(200, 'a' + count % 26)) && m.channel.topic == "/lz";
            ++count;
            return true;
          }).ok());
    CHECK(count == 100);
    CHECK(same);
  }
}

TEST_CASE("Filters select messages by channel and time", "[recorder][roundtrip]") {
  auto msgs = make_messages(900, false);
  auto path = temp_path("filter.mcap");
  WriterOptions options;
  options.chunk_size = 16 * 1024;
  write_file(path, msgs, options);
  auto r = Reader::open(path);
  REQUIRE(r.ok());
  ReadMessagesOptions ro;
  ro.channel_filter = [](const Channel& c) { return c.topic == "/imu"; };
  ro.start_time = msgs[300].log_time;
  ro.end_time = msgs[599].log_time;
  std::size_t n = 0;
  CHECK(r->read_messages(ro, [&](const MessageView& m) {
          CHECK(m.channel.topic == "/imu");
          ++n;
          return true;
        }).ok());
  CHECK(n == 100);
}

TEST_CASE("The writer refuses to overwrite unless asked to", "[recorder][writer]") {
  auto path = temp_path("exists.mcap");
  write_all(path, "x");
  auto w = Writer::create(path);
  CHECK_FALSE(w.ok());
  CHECK(w.message().find("already exists") != std::string::npos);
  WriterOptions o;
  o.overwrite = true;
  auto w2 = Writer::create(path, o);
  REQUIRE(w2.ok());
  CHECK(w2->close().ok());
  CHECK_FALSE(w2->close().ok());
}

TEST_CASE("The writer rejects messages on unknown channels and bad schema references", "[recorder][writer]") {
  auto w = Writer::create(temp_path("bad.mcap"));
  REQUIRE(w.ok());
  CHECK_FALSE(w->write(7, 0, 1, 1, {}).ok());
  CHECK_FALSE(w->add_channel("/x", "cdr", 9).ok());
  CHECK(w->close().ok());
}

TEST_CASE("An empty recording is a valid file", "[recorder][writer]") {
  auto path = temp_path("empty.mcap");
  auto w = Writer::create(path);
  REQUIRE(w.ok());
  REQUIRE(w->close().ok());
  auto r = Reader::open(path);
  REQUIRE(r.ok());
  CHECK(r->summary().finalized);
  CHECK(r->summary().statistics.message_count == 0);
  CHECK(stream_records(path, [](const Record&) { return true; }).ok());
}

TEST_CASE("A reader moved from answers with nothing and refuses to read, and the one moved to reads on",
          "[recorder][reader]") {
  auto path = temp_path("moved.mcap");
  auto w = Writer::create(path);
  REQUIRE(w.ok());
  auto channel = w->add_channel("/moved", "x-cerulion-bytes");
  REQUIRE(channel.ok());
  REQUIRE(w->write(*channel, 0, 1, 1, bytes_of("one")).ok());
  REQUIRE(w->close().ok());

  auto r = Reader::open(path);
  REQUIRE(r.ok());
  Reader moved = std::move(*r);
  CHECK(r->summary().channels.empty());
  CHECK(r->problems().empty());
  CHECK(r->read_messages({}, [](const MessageView&) { return true; }).code() == ErrorCode::InvalidArgument);
  CHECK_FALSE(r->read_metadata().ok());
  CHECK_FALSE(r->read_attachments().ok());

  CHECK(moved.summary().statistics.message_count == 1);
  std::size_t n = 0;
  REQUIRE(moved.read_messages({}, [&](const MessageView&) { return ++n, true; }).ok());
  CHECK(n == 1);
}
