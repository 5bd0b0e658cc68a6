// SPDX-License-Identifier: Apache-2.0
// Reading in log-time order: chunks that overlap in time are merged through their indexes, in a
// finished file and in one cut short (chunk indexes rebuilt by the scan); messages outside chunks
// come in file order, with one problem line when that is not log-time order.

#include <catch2/catch.hpp>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"
#include "overlapping_mcap.hpp"
#include "records.hpp"

using namespace rectest;

namespace {

constexpr int kChunks = 6;
constexpr int kPerChunk = 20;
constexpr std::uint64_t kFirstNs = 1'000'000'000;
constexpr std::uint64_t kStepNs = 1000;

std::string overlapping_file() {
  auto path = temp_path("overlapping.mcap");
  REQUIRE(cerulion::test::write_overlapping_chunks(path, {"/even", "/odd"}, kChunks, kPerChunk, kFirstNs, kStepNs).ok());
  return path;
}

// The payloads delivered, as text ("m0", "m1"...).
std::vector<std::string> read_payloads(Reader& reader, ReadMessagesOptions options, std::size_t stop_after = SIZE_MAX) {
  std::vector<std::string> got;
  REQUIRE(reader.read_messages(options, [&](const MessageView& m) {
            got.emplace_back(reinterpret_cast<const char*>(m.message.data.data()), m.message.data.size());
            return got.size() < stop_after;
          }).ok());
  return got;
}

std::vector<std::string> ranks(int first, int last, int stride = 1) {
  std::vector<std::string> out;
  for (int k = first; k <= last; k += stride) out.push_back("m" + std::to_string(k));
  return out;
}

ReadMessagesOptions in_log_time_order() {
  ReadMessagesOptions options;
  options.order = ReadOrder::LogTime;
  return options;
}

}  // namespace

TEST_CASE("Messages of chunks that overlap in time come in log-time order", "[recorder][order]") {
  auto path = overlapping_file();
  auto reader = Reader::open(path);
  REQUIRE(reader.ok());
  REQUIRE(reader->summary().indexed);
  REQUIRE(reader->summary().chunk_indexes.size() == kChunks);
  const int last = kChunks * kPerChunk - 1;

  // File order is untouched, and really differs: each chunk spans nearly the whole file.
  auto in_file_order = read_payloads(*reader, {});
  REQUIRE(in_file_order.size() == kChunks * kPerChunk);
  CHECK(std::vector<std::string>(in_file_order.begin(), in_file_order.begin() + 3) ==
        std::vector<std::string>{"m0", "m6", "m12"});

  CHECK(read_payloads(*reader, in_log_time_order()) == ranks(0, last));

  SECTION("with a channel filter and a time range") {
    auto options = in_log_time_order();
    options.channel_filter = [](const Channel& c) { return c.topic == "/odd"; };
    options.start_time = kFirstNs + 10 * kStepNs;
    options.end_time = kFirstNs + 50 * kStepNs;
    CHECK(read_payloads(*reader, options) == ranks(11, 49, 2));
  }
  SECTION("until the callback says stop") {
    CHECK(read_payloads(*reader, in_log_time_order(), 7) == ranks(0, 6));
  }
  SECTION("in a file cut short, through the chunk indexes the scan rebuilds") {
    std::string bytes = read_all(path);
    auto cut = temp_path("overlapping-cut.mcap");
    write_all(cut, bytes.substr(0, reader->summary().valid_data_end));
    auto scanned = Reader::open(cut);
    REQUIRE(scanned.ok());
    REQUIRE_FALSE(scanned->summary().indexed);
    CHECK(read_payloads(*scanned, in_log_time_order()) == ranks(0, last));
  }
  CHECK(reader->problems().empty());
}

TEST_CASE("Messages with equal log times in different chunks come in file order", "[recorder][order]") {
  auto path = temp_path("ties.mcap");
  {
    auto w = Writer::create(path);
    REQUIRE(w.ok());
    auto ch = w->add_channel("/t", "x");
    REQUIRE(ch.ok());
    auto put = [&](std::uint64_t t, const std::string& text) { REQUIRE(w->write(*ch, 0, t, t, bytes_of(text)).ok()); };
    put(7, "a7");
    put(5, "a5");
    REQUIRE(w->flush().ok());
    put(5, "b5");
    put(6, "b6");
    REQUIRE(w->close().ok());
  }
  auto reader = Reader::open(path);
  REQUIRE(reader.ok());
  CHECK(read_payloads(*reader, in_log_time_order()) == std::vector<std::string>{"a5", "b5", "b6", "a7"});
}

TEST_CASE("Messages outside chunks come in file order, with one problem line when out of log-time order", "[recorder][order]") {
  auto unchunked = [](std::vector<std::uint64_t> times) {
    ByteVector out;
    for (auto b : kMagic) out.push_back(static_cast<std::byte>(b));
    detail::append_record(out, Header{"", "test"});
    detail::append_record(out, Channel{1, 0, "/t", "x", {}});
    for (auto t : times) detail::append_record(out, Message{1, 0, t, t, bytes_of("m" + std::to_string(t))});
    return out;
  };
  const std::string line = "messages outside chunks are not in log-time order; they were read in file order";
  auto disordered = unchunked({2, 1, 3});
  auto reader = Reader::open_memory(disordered);
  REQUIRE(reader.ok());
  REQUIRE(reader->summary().unchunked_messages == 3);
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(read_payloads(*reader, in_log_time_order()) == std::vector<std::string>{"m2", "m1", "m3"});
  }
  CHECK(std::count(reader->problems().begin(), reader->problems().end(), line) == 1);

  auto ordered = unchunked({1, 2, 3});
  auto in_order = Reader::open_memory(ordered);
  REQUIRE(in_order.ok());
  CHECK(read_payloads(*in_order, in_log_time_order()) == std::vector<std::string>{"m1", "m2", "m3"});
  CHECK(std::count(in_order->problems().begin(), in_order->problems().end(), line) == 0);
}
