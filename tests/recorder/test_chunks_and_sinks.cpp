// SPDX-License-Identifier: Apache-2.0
// Encoded chunks written as they are, writers over memory, and files that appear only once whole.

#include <catch2/catch.hpp>

#include <filesystem>

#include "cerulion/recorder/chunk.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/sink.hpp"
#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"
#include "require_ok.hpp"

using namespace rectest;
using cerulion::test::requireOk;

namespace {

// Message records back to back, as a flashback store keeps them before compression.
ByteVector message_records(std::uint16_t channel, std::uint32_t first, std::uint32_t count) {
  ByteVector out;
  for (std::uint32_t i = first; i < first + count; ++i) {
    append_message_record(out, {channel, i, 1000 + i, 500 + i},
                          bytes_of("message " + std::to_string(i) + std::string(i % 50, 'x')));
  }
  return out;
}

std::vector<Message> read_back(const ByteVector& file) {
  auto reader = Reader::open_memory(file);
  requireOk(reader.status());
  std::vector<Message> out;
  requireOk(reader->read_messages({}, [&](const MessageView& m) {
    out.push_back(m.message);
    return true;
  }));
  CHECK(reader->problems().empty());
  return out;
}

}  // namespace

TEST_CASE("ChunkEncoder output written by write_chunk reads back message for message", "[recorder][chunk]") {
  ChunkEncoder encoder;
  ByteVector first, second;
  requireOk(encoder.encode(message_records(0, 0, 100), first));
  requireOk(encoder.encode(message_records(1, 100, 50), second));
  auto summary = describe_chunk(first);
  requireOk(summary.status());
  CHECK(summary->message_count == 100);
  CHECK(summary->message_start_time == 1000);
  CHECK(summary->message_end_time == 1099);
  CHECK(summary->compression == "zstd");

  ByteVector file;
  auto w = Writer::create(std::make_unique<MemorySink>(file));
  requireOk(w.status());
  REQUIRE(w->add_channel("/a", "x-cerulion-bytes").value() == 0);
  REQUIRE(w->add_channel("/b", "x-cerulion-bytes").value() == 1);
  requireOk(w->write_chunk(first));
  requireOk(w->write_chunk(second));
  // Ordinary messages after raw chunks go into a chunk of their own.
  requireOk(w->write(0, 150, 2000, 1999, bytes_of("last")));
  requireOk(w->close());

  auto messages = read_back(file);
  REQUIRE(messages.size() == 151);
  for (std::uint32_t i = 0; i < 150; ++i) CHECK(messages[i].sequence == i);
  CHECK(messages[100].channel_id == 1);
  CHECK(messages[150].data == bytes_of("last"));
  auto reader = Reader::open_memory(file);
  CHECK(reader->summary().statistics.message_count == 151);
  CHECK(reader->summary().statistics.channel_message_counts.at(1) == 50);
  CHECK(reader->summary().chunk_indexes.size() == 3);
}

TEST_CASE("write_chunk refuses a chunk on a channel the file does not have, or bad framing", "[recorder][chunk]") {
  ChunkEncoder encoder;
  ByteVector chunk;
  requireOk(encoder.encode(message_records(7, 0, 3), chunk));
  ByteVector file;
  auto w = Writer::create(std::make_unique<MemorySink>(file));
  requireOk(w.status());
  CHECK(w->write_chunk(chunk).code() == cerulion::ErrorCode::InvalidArgument);
  ByteVector torn(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(chunk.size() / 2));
  CHECK(w->write_chunk(torn).code() == cerulion::ErrorCode::Corrupted);
  CHECK(describe_chunk({}).code() == cerulion::ErrorCode::Corrupted);
  ByteVector junk = bytes_of("not a record at all");
  CHECK(encoder.encode(junk, chunk).code() == cerulion::ErrorCode::InvalidArgument);
}

TEST_CASE("A file sink that appears on close leaves nothing when abandoned and refuses to replace", "[recorder][sink]") {
  const std::string path = temp_path("dump.mcap");
  SECTION("abandoned") {
    auto sink = open_file_sink(path, {.appear_on_close = true});
    requireOk(sink.status());
    requireOk((*sink)->write(bytes_of("half a file")));
    CHECK_FALSE(std::filesystem::exists(path));
    (*sink)->abandon();
    CHECK_FALSE(std::filesystem::exists(path));
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
      CHECK(entry.path().filename().string().find("dump.mcap") == std::string::npos);
    }
  }
  SECTION("closed") {
    auto sink = open_file_sink(path, {.appear_on_close = true});
    requireOk(sink.status());
    requireOk((*sink)->write(bytes_of("whole")));
    requireOk((*sink)->close());
    CHECK(read_all(path) == "whole");
  }
  SECTION("existing file kept") {
    write_all(path, "precious");
    CHECK(open_file_sink(path, {.appear_on_close = true}).code() == cerulion::ErrorCode::InvalidArgument);
    auto sink = open_file_sink(path, {.overwrite = true, .appear_on_close = true});
    requireOk(sink.status());
    requireOk((*sink)->write(bytes_of("new")));
    CHECK(read_all(path) == "precious");
    requireOk((*sink)->close());
    CHECK(read_all(path) == "new");
  }
  SECTION("a writer that fails leaves nothing") {
    auto sink = open_file_sink(path, {.appear_on_close = true});
    requireOk(sink.status());
    auto w = Writer::create(std::move(*sink));
    requireOk(w.status());
    requireOk(w->add_channel("/a", "x").status());
    w->abandon();
    CHECK_FALSE(std::filesystem::exists(path));
  }
}
