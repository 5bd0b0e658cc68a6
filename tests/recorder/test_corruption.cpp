// SPDX-License-Identifier: Apache-2.0
// Bad input: truncation, flipped bits, lying length fields, empty and foreign files. The reader
// must say what is wrong, keep what is good, and never crash, hang or over-allocate.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/recovery.hpp"
#include "cerulion/recorder/writer.hpp"
#include "fuzz_body.hpp"
#include "helpers.hpp"
#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

using namespace rectest;

namespace {

constexpr std::size_t kMessages = 600;

std::string make_recording(Compression compression) {
  auto path = temp_path("src.mcap");
  WriterOptions o;
  o.compression = compression;
  o.chunk_size = 4096;
  auto w = Writer::create(path, o);
  REQUIRE(w.ok());
  auto a = w->add_channel("/a", "cdr");
  auto b = w->add_channel("/b", "cdr");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (std::size_t i = 0; i < kMessages; ++i) {
    std::string payload(100 + i % 50, static_cast<char>('a' + i % 26));
    REQUIRE(w->write(i % 2 ? *a : *b, static_cast<std::uint32_t>(i), 1000 + i, 1000 + i, bytes_of(payload)).ok());
  }
  REQUIRE(w->write_metadata({"m", {{"k", "v"}}}).ok());
  REQUIRE(w->close().ok());
  return path;
}

std::size_t count_messages(Reader& r) {
  std::size_t n = 0;
  REQUIRE(r.read_messages({}, [&](const MessageView&) {
            ++n;
            return true;
          }).ok());
  return n;
}

}  // namespace

TEST_CASE("A zero-length file is refused with a clear message", "[recorder][corruption]") {
  auto path = temp_path("zero.mcap");
  write_all(path, "");
  auto r = Reader::open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.code() == ErrorCode::Corrupted);
  CHECK(r.message().find("empty file") != std::string::npos);
  CHECK_FALSE(stream_records(path, [](const Record&) { return true; }).ok());
  CHECK_FALSE(recover(path, temp_path("out.mcap")).ok());
}

TEST_CASE("A file that is not MCAP is refused with a clear message", "[recorder][corruption]") {
  auto path = temp_path("text.mcap");
  write_all(path, "hello, this is not a recording\n");
  auto r = Reader::open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find("not an MCAP file") != std::string::npos);
  auto missing = Reader::open(temp_path("missing.mcap"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == ErrorCode::NotFound);
}

TEST_CASE("A FIFO or a directory in place of a file is refused at once, never waited on", "[recorder][corruption]") {
  std::string path;
  SECTION("a FIFO nobody writes to") {
    path = temp_path("fifo.mcap");
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  }
  SECTION("a directory") { path = std::filesystem::temp_directory_path().string(); }
  auto r = Reader::open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find("not a regular file") != std::string::npos);
  CHECK_FALSE(stream_records(path, [](const Record&) { return true; }).ok());
  CHECK_FALSE(recover(path, temp_path("out.mcap")).ok());
}

TEST_CASE("A file cut at any point reads up to its last complete chunk", "[recorder][corruption]") {
  auto path = make_recording(Compression::Zstd);
  std::string bytes = read_all(path);
  std::size_t previous = 0;
  for (std::size_t cut = 0; cut < bytes.size(); cut += 97) {
    INFO("cut at " << cut);
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), cut);
    auto r = Reader::open_memory(view);
    if (cut < 8 + 9 + 8) {  // not even a complete Header
      CHECK_FALSE(r.ok());
      continue;
    }
    REQUIRE(r.ok());
    CHECK_FALSE(r->summary().finalized);
    std::size_t n = count_messages(*r);
    CHECK(n <= kMessages);
    CHECK(n >= previous);  // more file never means fewer messages
    CHECK(r->summary().statistics.message_count == n);
    previous = n;
    CHECK_FALSE(stream_records_memory(view, [](const Record&) { return true; }).ok());
  }
  CHECK(previous > kMessages / 2);
}

TEST_CASE("A flipped bit in a chunk is reported and that chunk skipped", "[recorder][corruption]") {
  for (auto compression : {Compression::Zstd, Compression::None}) {
    auto path = make_recording(compression);
    auto clean = Reader::open(path);
    REQUIRE(clean.ok());
    const auto chunks = clean->summary().chunk_indexes;
    REQUIRE(chunks.size() > 3);
    std::string bytes = read_all(path);
    const auto& victim = chunks[1];
    std::size_t at = victim.chunk_start_offset + victim.chunk_length - 20;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
    auto bad_path = temp_path("flipped.mcap");
    write_all(bad_path, bytes);
    auto r = Reader::open(bad_path);
    REQUIRE(r.ok());
    std::size_t n = count_messages(*r);
    CHECK(n < kMessages);
    CHECK(n > kMessages / 2);
    REQUIRE_FALSE(r->problems().empty());
    CHECK(r->problems().back().find("chunk at offset " + std::to_string(victim.chunk_start_offset)) != std::string::npos);

    auto out = temp_path("recovered.mcap");
    auto report = recover(bad_path, out);
    REQUIRE(report.ok());
    CHECK(report->chunks_dropped == 1);
    CHECK(report->messages == n);
    auto rr = Reader::open(out);
    REQUIRE(rr.ok());
    CHECK(rr->summary().indexed);
    CHECK(rr->problems().empty());
    CHECK(count_messages(*rr) == n);
  }
}

TEST_CASE("Lying length fields never make the reader allocate or read past the file", "[recorder][corruption]") {
  auto path = make_recording(Compression::Zstd);
  auto clean = Reader::open(path);
  REQUIRE(clean.ok());
  const auto chunk = clean->summary().chunk_indexes.at(2);
  const std::string original = read_all(path);
  auto patch_u64 = [](std::string& s, std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  SECTION("a record length of 2^62") {
    std::string bytes = original.substr(0, original.size() - 100);  // unfinalized: forces a scan
    patch_u64(bytes, chunk.chunk_start_offset + 1, 1ull << 62);
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    auto r = Reader::open_memory(view);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->problems().empty());
    CHECK(r->problems().back().find("claims") != std::string::npos);
    fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  SECTION("an uncompressed size of 2^60 in a chunk") {
    std::string bytes = original;
    patch_u64(bytes, chunk.chunk_start_offset + 9 + 16, 1ull << 60);
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    auto r = Reader::open_memory(view);
    REQUIRE(r.ok());
    std::size_t n = count_messages(*r);
    CHECK(n < kMessages);
    REQUIRE_FALSE(r->problems().empty());
  }
  SECTION("a flipped bit in the summary") {
    std::string bytes = original;
    bytes[bytes.size() - 8 - 29 - 40] ^= 0x01;
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    auto r = Reader::open_memory(view);
    REQUIRE(r.ok());
    CHECK_FALSE(r->summary().indexed);
    REQUIRE_FALSE(r->problems().empty());
    CHECK(r->problems().front().find("summary CRC mismatch") != std::string::npos);
    CHECK(count_messages(*r) == kMessages);
  }
  SECTION("a summary_start beyond the end of the file") {
    std::string bytes = original;
    patch_u64(bytes, bytes.size() - 8 - 29 + 9, 1ull << 40);
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    auto r = Reader::open_memory(view);
    REQUIRE(r.ok());
    CHECK_FALSE(r->summary().indexed);
    CHECK(count_messages(*r) == kMessages);
  }
}

TEST_CASE("Recovery rebuilds a complete indexed file from a truncated one", "[recorder][recovery]") {
  auto path = make_recording(Compression::Zstd);
  std::string bytes = read_all(path);
  auto cut_path = temp_path("cut.mcap");
  write_all(cut_path, bytes.substr(0, bytes.size() * 6 / 10));
  auto cut = Reader::open(cut_path);
  REQUIRE(cut.ok());
  std::size_t readable = count_messages(*cut);
  auto out = temp_path("whole.mcap");
  auto report = recover(cut_path, out);
  REQUIRE(report.ok());
  CHECK_FALSE(report->input_finalized);
  CHECK(report->messages == readable);
  CHECK(report->channels == 2);
  CHECK(report->bytes_ignored > 0);
  auto r = Reader::open(out);
  REQUIRE(r.ok());
  CHECK(r->summary().finalized);
  CHECK(r->summary().indexed);
  CHECK(count_messages(*r) == readable);
  CHECK(stream_records(out, [](const Record&) { return true; }).ok());
  // Recovering a whole file keeps everything, metadata included.
  auto again = recover(path, temp_path("again.mcap"));
  REQUIRE(again.ok());
  CHECK(again->messages == kMessages);
  CHECK(again->metadata == 1);
  CHECK(again->input_finalized);
}

TEST_CASE("Recovery keeps every channel and schema the input declares, even those without messages", "[recorder][recovery]") {
  auto path = temp_path("declared.mcap");
  {
    auto w = Writer::create(path);
    REQUIRE(w.ok());
    auto quiet_schema = w->add_schema("Quiet", "jsonschema", bytes_of("{}"));
    auto busy_schema = w->add_schema("Busy", "jsonschema", bytes_of("{}"));
    REQUIRE(w->add_schema("Unused", "jsonschema", bytes_of("{}")).ok());
    REQUIRE(w->add_channel("/quiet", "json", *quiet_schema).ok());
    auto busy = w->add_channel("/busy", "json", *busy_schema);
    REQUIRE(w->add_channel("/plain", "x").ok());
    for (std::uint32_t i = 0; i < 50; ++i) REQUIRE(w->write(*busy, i, 100 + i, 100 + i, bytes_of("{}")).ok());
    REQUIRE(w->close().ok());
  }
  std::string bytes = read_all(path);
  std::uint64_t data_end = 0;
  {
    auto r = Reader::open(path);
    REQUIRE(r.ok());
    data_end = r->summary().valid_data_end;
  }
  auto damaged = temp_path("declared-damaged.mcap");
  SECTION("definitions damaged in the data section come from the intact summary") {
    // A bit flipped in an opcode turns the record into an unknown one readers skip.
    auto source = detail::memory_source({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    detail::Lexer lexer(*source, 8, data_end);
    int hidden = 0;
    while (auto rec = lexer.next()) {
      std::string error;
      auto decoded = detail::decode_record(rec->opcode, rec->content, error);
      REQUIRE(decoded);
      auto* channel = std::get_if<Channel>(&*decoded);
      auto* schema = std::get_if<Schema>(&*decoded);
      if ((channel && channel->topic == "/quiet") || (schema && schema->name == "Busy")) {
        bytes[rec->offset] = static_cast<char>(bytes[rec->offset] ^ 0x40);
        ++hidden;
      }
    }
    REQUIRE(hidden == 2);
    write_all(damaged, bytes);
    auto r = Reader::open(damaged);
    REQUIRE(r.ok());
    REQUIRE(r->summary().indexed);
  }
  SECTION("definitions in the data section of a file cut short are kept") {
    write_all(damaged, bytes.substr(0, data_end));
  }
  auto out = temp_path("declared-recovered.mcap");
  auto report = recover(damaged, out);
  REQUIRE(report.ok());
  CHECK(report->messages == 50);
  CHECK(report->channels == 3);
  CHECK(report->schemas == 3);
  CHECK(report->problems.empty());
  auto r = Reader::open(out);
  REQUIRE(r.ok());
  std::map<std::string, std::string> schema_of_topic;
  for (const auto& [id, c] : r->summary().channels) {
    auto s = r->summary().schemas.find(c.schema_id);
    schema_of_topic[c.topic] = s == r->summary().schemas.end() ? "" : s->second.name;
  }
  CHECK(schema_of_topic == std::map<std::string, std::string>{{"/busy", "Busy"}, {"/plain", ""}, {"/quiet", "Quiet"}});
  std::set<std::string> schema_names;
  for (const auto& [id, s] : r->summary().schemas) schema_names.insert(s.name);
  CHECK(schema_names == std::set<std::string>{"Busy", "Quiet", "Unused"});
  CHECK(r->summary().statistics.message_count == 50);
}

TEST_CASE("Reading a damaged file again reports each problem once", "[recorder][corruption]") {
  auto path = make_recording(Compression::Zstd);
  std::string bytes = read_all(path);
  auto clean = Reader::open(path);
  REQUIRE(clean.ok());
  const auto& victim = clean->summary().chunk_indexes.at(1);
  bytes[victim.chunk_start_offset + victim.chunk_length - 20] ^= 0x10;
  auto bad_path = temp_path("flipped-twice.mcap");
  write_all(bad_path, bytes);
  for (auto order : {ReadOrder::File, ReadOrder::LogTime}) {
    auto r = Reader::open(bad_path);
    REQUIRE(r.ok());
    ReadMessagesOptions options;
    options.order = order;
    for (int pass = 0; pass < 3; ++pass) {
      REQUIRE(r->read_messages(options, [](const MessageView&) { return true; }).ok());
    }
    REQUIRE(r->problems().size() == 1);
    CHECK(r->problems()[0].find("chunk at offset " + std::to_string(victim.chunk_start_offset)) != std::string::npos);
  }
}

TEST_CASE("The official truncated sample recovers to the messages of its complete chunks", "[recorder][recovery]") {
  auto sample = reference_dir() / "mcap-samples" / "zstd-truncated.mcap";
  if (!fs::exists(sample)) {
    WARN("skipped: " << sample.string() << " is absent");
    return;
  }
  auto out = temp_path("sample-recovered.mcap");
  auto report = recover(sample.string(), out);
  REQUIRE(report.ok());
  CHECK(report->messages == 586);
  auto r = Reader::open(out);
  REQUIRE(r.ok());
  CHECK(r->summary().statistics.message_count == 586);
}

TEST_CASE("The fuzz regression corpus replays without crashing", "[recorder][fuzz]") {
  fs::path dir(CERULION_RECORDER_CORPUS);
  REQUIRE(fs::exists(dir));
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string bytes = read_all(entry.path().string());
    fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++n;
  }
  CHECK(n > 0);
}

// Not run by default: writes small seed files for the fuzzer into $CORPUS_OUT.
TEST_CASE("Seed files for the fuzz corpus are generated on request", "[.corpus]") {
  const char* out = std::getenv("CORPUS_OUT");
  REQUIRE(out);
  for (auto compression : {Compression::Zstd, Compression::None}) {
    auto path = temp_path("seed.mcap");
    WriterOptions o;
    o.compression = compression;
    o.chunk_size = 300;
    auto w = Writer::create(path, o);
    REQUIRE(w.ok());
    auto s = w->add_schema("S", "jsonschema", bytes_of("{}"));
    auto c = w->add_channel("/t", "json", *s, {{"k", "v"}});
    for (std::uint32_t i = 0; i < 12; ++i) REQUIRE(w->write(*c, i, i, i, bytes_of(std::string(40, 'x'))).ok());
    REQUIRE(w->write_metadata({"m", {{"a", "b"}}}).ok());
    REQUIRE(w->write_attachment({1, 2, "f", "text/plain", bytes_of("abc"), 0}).ok());
    REQUIRE(w->close().ok());
    std::string bytes = read_all(path);
    std::string name = std::string(out) + "/seed-" + to_string(compression);
    write_all(name + ".mcap", bytes);
    write_all(name + "-truncated.mcap", bytes.substr(0, bytes.size() / 2));
    std::string flipped = bytes;
    flipped[flipped.size() / 3] ^= 0x01;
    write_all(name + "-flipped.mcap", flipped);
  }
  write_all(std::string(out) + "/empty", "");
  write_all(std::string(out) + "/not-mcap", "not an mcap file at all");
}

TEST_CASE("A file the recorder cannot use is an error about that file, its path as the subject",
          "[recorder][corruption]") {
  const auto missing = temp_path("missing.mcap");
  CHECK(Reader::open(missing).subject() == Subject::path(missing));
  const auto fifo = temp_path("subject-fifo.mcap");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(Reader::open(fifo).subject() == Subject::path(fifo));
  CHECK(stream_records(fifo, [](const Record&) { return true; }).subject() == Subject::path(fifo));
  const auto text = temp_path("subject-text.mcap");
  write_all(text, "hello, this is not a recording\n");
  CHECK(Reader::open(text).subject() == Subject::path(text));
  CHECK(recover(text, temp_path("subject-out.mcap")).subject() == Subject::path(text));
  // An output that exists already is refused as that file's problem too.
  auto existing = Writer::create(text, WriterOptions{});
  REQUIRE_FALSE(existing.ok());
  CHECK(existing.subject() == Subject::path(text));
  ::unlink(fifo.c_str());
  ::unlink(text.c_str());
}
