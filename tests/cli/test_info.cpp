// `cerulion info` on finished, cut-short and bad files, through the real binary.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

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
  CHECK(j["end_ns"].get<std::uint64_t>() > j["start_ns"].get<std::uint64_t>());
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
