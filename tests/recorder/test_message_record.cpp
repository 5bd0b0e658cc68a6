// SPDX-License-Identifier: Apache-2.0
// The Message record, encoded and read in one place: its bytes as MCAP lays them out, and what a
// reader refuses.

#include <catch2/catch.hpp>

#include <algorithm>

#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recorder/sink.hpp"
#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"
#include "require_ok.hpp"

using namespace rectest;
using cerulion::test::requireOk;

namespace {

std::uint64_t le_at(const ByteVector& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[at + i]);
  return v;
}

ByteVector record_of(const MessageFields& fields, const std::string& payload) {
  ByteVector out;
  append_message_record(out, fields, bytes_of(payload));
  return out;
}

}  // namespace

TEST_CASE("A Message record is laid out as MCAP says: opcode, length, channel, sequence, times, payload",
          "[recorder][message]") {
  const ByteVector r = record_of({0x0102, 0x03040506, 0x1112131415161718ull, 0x2122232425262728ull}, "abc");
  REQUIRE(r.size() == message_record_size(3));
  REQUIRE(r.size() == 1 + 8 + 2 + 4 + 8 + 8 + 3);
  CHECK(le_at(r, 0, 1) == 0x05);
  CHECK(le_at(r, 1, 8) == 2 + 4 + 8 + 8 + 3);
  CHECK(le_at(r, 9, 2) == 0x0102);
  CHECK(le_at(r, 11, 4) == 0x03040506);
  CHECK(le_at(r, 15, 8) == 0x1112131415161718ull);
  CHECK(le_at(r, 23, 8) == 0x2122232425262728ull);
  CHECK(static_cast<char>(r[31]) == 'a');
  CHECK(static_cast<char>(r[33]) == 'c');
}

TEST_CASE("read_message_record gives back the fields, the payload and where the next record starts",
          "[recorder][message]") {
  ByteVector records = record_of({7, 42, 1000, 900}, "first");
  const std::size_t first_size = records.size();
  append_message_record(records, {8, 43, 1001, 901}, {});

  auto first = read_message_record(records);
  REQUIRE(first);
  CHECK(first->fields.channel_id == 7);
  CHECK(first->fields.sequence == 42);
  CHECK(first->fields.log_time == 1000);
  CHECK(first->fields.publish_time == 900);
  CHECK(std::string(reinterpret_cast<const char*>(first->data.data()), first->data.size()) == "first");
  REQUIRE(first->record_size == first_size);

  auto second = read_message_record(std::span(records).subspan(first_size));
  REQUIRE(second);
  CHECK(second->fields.channel_id == 8);
  CHECK(second->data.empty());
  CHECK(second->record_size == message_record_size(0));
}

TEST_CASE("read_message_record refuses what does not start with one whole Message record", "[recorder][message]") {
  const ByteVector whole = record_of({1, 2, 3, 4}, "payload");
  SECTION("cut short, anywhere") {
    for (std::size_t n = 0; n < whole.size(); ++n) {
      CHECK_FALSE(read_message_record(std::span(whole).first(n)));
    }
  }
  SECTION("another opcode") {
    ByteVector other = whole;
    other[0] = static_cast<std::byte>(Opcode::Metadata);
    CHECK_FALSE(read_message_record(other));
  }
  SECTION("a length shorter than the fixed fields") {
    ByteVector shorter = whole;
    shorter[1] = static_cast<std::byte>(kMessageFieldsSize - 1);
    for (int i = 2; i < 9; ++i) shorter[i] = std::byte{0};
    CHECK_FALSE(read_message_record(shorter));
    CHECK_FALSE(decode_message_fields(std::span(whole).subspan(kRecordPrefixSize, kMessageFieldsSize - 1)));
  }
  SECTION("a length past the bytes, however large") {
    ByteVector longer = whole;
    for (int i = 1; i < 9; ++i) longer[i] = std::byte{0xff};
    CHECK_FALSE(read_message_record(longer));
  }
}

TEST_CASE("The writer stores a message as the very bytes append_message_record gives", "[recorder][message]") {
  ByteVector file;
  WriterOptions options;
  options.compression = Compression::None;
  auto w = Writer::create(std::make_unique<MemorySink>(file), options);
  requireOk(w.status());
  requireOk(w->add_channel(Channel{3, 0, "/t", "x-cerulion-bytes", {}}));
  requireOk(w->write(3, 9, 5000, 4000, bytes_of("in the file")));
  requireOk(w->close());

  const ByteVector expected = record_of({3, 9, 5000, 4000}, "in the file");
  CHECK(std::search(file.begin(), file.end(), expected.begin(), expected.end()) != file.end());
}
