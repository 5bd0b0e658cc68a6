// SPDX-License-Identifier: Apache-2.0
// `cerulion info` on finished, cut-short and bad files, through the real binary.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "cerulion/recorder/writer.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;

TEST_CASE("info reports a finished recording's messages, chunks and channels", "[cli][info]") {
  auto sample = mcap_sample("zstd-chunks.mcap");
  if (sample.empty()) {
    WARN("skipped: ../shared/reference/mcap-samples is absent");
    return;
  }
  auto text = run_cerulion({"info", sample});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("messages:    1041") != std::string::npos);
  CHECK(text.out.find("/imu") != std::string::npos);
  auto r = run_cerulion({"info", "--json", sample});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["message_count"] == 1041);
  CHECK(j["finalized"] == true);
  CHECK(j["chunk_count"] == 11);
  CHECK(j["compression_ratio"].get<double>() > 1.0);
  CHECK(j["end_log_time_ns"].get<std::uint64_t>() > j["start_log_time_ns"].get<std::uint64_t>());
  std::map<std::string, std::uint64_t> counts;
  for (const auto& c : j["channels"]) {
    counts[c["topic"]] = c["message_count"];
    CHECK(c.contains("bytes"));
  }
  CHECK(counts["/imu"] == 1000);
  CHECK(counts["/camera/front"] == 31);
  CHECK(counts["/cmd_vel"] == 10);
}

TEST_CASE("info says a cut-short recording was not finalized and counts its complete chunks", "[cli][info]") {
  auto sample = mcap_sample("zstd-truncated.mcap");
  if (sample.empty()) {
    WARN("skipped: ../shared/reference/mcap-samples is absent");
    return;
  }
  auto text = run_cerulion({"info", sample});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("NO") != std::string::npos);
  auto j = nlohmann::json::parse(run_cerulion({"info", "--json", sample}).out);
  CHECK(j["finalized"] == false);
  CHECK(j["message_count"] == 586);
}

TEST_CASE("info on bad input prints one clear line and exits 1", "[cli][info]") {
  auto empty = record_temp_path("empty.mcap");
  spit(empty, "");
  auto r = run_cerulion({"info", empty}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("empty file") != std::string::npos);
  auto text = record_temp_path("text.mcap");
  spit(text, "just some text\n");
  r = run_cerulion({"info", text}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("not an MCAP file") != std::string::npos);
  r = run_cerulion({"info", record_temp_path("missing.mcap")}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 1);
  r = run_cerulion({"info"}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 2);
}

TEST_CASE("info, play and recover refuse a FIFO in place of a recording at once, in one line", "[cli][info]") {
  const auto fifo = record_temp_path("fifo.mcap");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (std::vector<std::string> args : {std::vector<std::string>{"info", fifo}, {"play", fifo},
                                        {"recover", fifo, "-o", record_temp_path("out.mcap")}}) {
    INFO(args[0]);
    // Nobody ever writes to the FIFO: a command that opened it to read would wait for ever.
    auto r = run_cerulion(args, {}, std::chrono::seconds(20));
    CHECK(r.exit_code == 1);
    CHECK(r.err == "cerulion: " + fifo + ": not a regular file\n");
  }
}

TEST_CASE("info survives a flipped bit and a lying length field", "[cli][info]") {
  auto sample = mcap_sample("zstd-chunks.mcap");
  if (sample.empty()) {
    WARN("skipped: ../shared/reference/mcap-samples is absent");
    return;
  }
  std::string bytes = slurp(sample);
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x04;
  auto path = record_temp_path("flipped.mcap");
  spit(path, flipped);
  auto r = run_cerulion({"info", "--json", path}, {}, std::chrono::seconds(30));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["message_count"].get<int>() < 1041);
  CHECK_FALSE(j["problems"].empty());
  // A length field claiming 2^62 bytes right after the header, in a file without its footer.
  std::string lying = bytes.substr(0, bytes.size() / 2);
  std::size_t first_record = 8 + 9 + static_cast<unsigned char>(bytes[9]) + 256 * static_cast<unsigned char>(bytes[10]);
  for (int i = 0; i < 8; ++i) lying[first_record + 1 + i] = static_cast<char>(i == 7 ? 0x40 : 0);
  auto lpath = record_temp_path("lying.mcap");
  spit(lpath, lying);
  r = run_cerulion({"info", lpath}, {}, std::chrono::seconds(30));
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.err.find("claims") != std::string::npos);
}

TEST_CASE("info names each channel's schema, or says it has none", "[cli][info]") {
  auto path = record_temp_path("schemas.mcap");
  {
    auto w = cerulion::recorder::Writer::create(path);
    REQUIRE(w.ok());
    const std::string text = "float64 x";
    auto schema = w->add_schema("geometry/Point", "ros2msg", std::as_bytes(std::span(text)));
    REQUIRE(schema.ok());
    auto typed = w->add_channel("/point", "cdr", *schema);
    auto bare = w->add_channel("/bytes", "x-cerulion-bytes");
    REQUIRE(typed.ok());
    REQUIRE(bare.ok());
    const std::byte payload[1] = {std::byte{1}};
    REQUIRE(w->write(*typed, 0, 100, 100, payload).ok());
    REQUIRE(w->write(*bare, 0, 200, 200, payload).ok());
    REQUIRE(w->close().ok());
  }
  auto text = run_cerulion({"info", path});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("[cdr]  schema geometry/Point (ros2msg)") != std::string::npos);
  CHECK(text.out.find("[x-cerulion-bytes]  no schema") != std::string::npos);
  auto j = info_json(path);
  std::map<std::string, nlohmann::json> schemas;
  for (const auto& c : j["channels"]) schemas[c["topic"]] = c["schema"];
  CHECK(schemas["/point"]["name"] == "geometry/Point");
  CHECK(schemas["/point"]["encoding"] == "ros2msg");
  CHECK(schemas["/bytes"].is_null());  // no schema: null, as topic info says it
}

TEST_CASE("info shows each metadata record in text, a key and its value a line, escaped for a terminal",
          "[cli][info]") {
  auto path = record_temp_path("metadata.mcap");
  {
    auto w = cerulion::recorder::Writer::create(path);
    REQUIRE(w.ok());
    cerulion::recorder::Metadata why;
    why.name = "flashback";
    why.metadata = {{"trigger", "death"},
                    {"details", "publisher 18089 of /imu died"},
                    {"note", "arm hit\nthe table \x1b[31mred"},
                    {"messages:/imu", "1203"},
                    {"empty", ""}};
    REQUIRE(w->write_metadata(why).ok());
    cerulion::recorder::Metadata other;
    other.name = "site";
    other.metadata = {{"robot", "r2"}};
    REQUIRE(w->write_metadata(other).ok());
    REQUIRE(w->close().ok());
  }
  auto r = run_cerulion({"info", path});
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  CHECK(r.out.find("metadata:    2\n") != std::string::npos);
  CHECK(r.out.find("\n  flashback:\n") != std::string::npos);
  CHECK(r.out.find("\n    trigger: death\n") != std::string::npos);
  CHECK(r.out.find("\n    details: publisher 18089 of /imu died\n") != std::string::npos);
  CHECK(r.out.find("\n    messages:/imu: 1203\n") != std::string::npos);
  CHECK(r.out.find("\n    empty: \"\"\n") != std::string::npos);
  CHECK(r.out.find("\n  site:\n    robot: r2\n") != std::string::npos);
  // The note is there, on one line, and nothing from the file reaches the terminal as a control
  // character.
  CHECK(r.out.find("\n    note: ") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("arm hit\nthe table") == std::string::npos);
}
