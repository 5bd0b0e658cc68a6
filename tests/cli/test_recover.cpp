// `cerulion recover` through the real binary.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;

TEST_CASE("recover makes a cut-short recording whole and says what it kept", "[cli][recover]") {
  auto sample = mcap_sample("zstd-truncated.mcap");
  if (sample.empty()) {
    WARN("skipped: ../shared/reference/mcap-samples is absent");
    return;
  }
  auto out = record_temp_path("recovered.mcap");
  auto r = run_cerulion({"recover", sample, "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Recovered 586 messages") != std::string::npos);
  CHECK(r.err.find("truncated") != std::string::npos);
  auto info = nlohmann::json::parse(run_cerulion({"info", "--json", out}).out);
  CHECK(info["finalized"] == true);
  CHECK(info["indexed"] == true);
  CHECK(info["message_count"] == 586);
  // It never overwrites without --force.
  r = run_cerulion({"recover", sample, "-o", out});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("already exists") != std::string::npos);
  r = run_cerulion({"recover", sample, "-o", out, "--force", "--json"});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["messages"] == 586);
  CHECK(j["input_finalized"] == false);
}

TEST_CASE("recover drops a damaged chunk and keeps the rest", "[cli][recover]") {
  auto sample = mcap_sample("zstd-chunks.mcap");
  if (sample.empty()) {
    WARN("skipped: ../shared/reference/mcap-samples is absent");
    return;
  }
  std::string bytes = slurp(sample);
  bytes[bytes.size() / 2] ^= 0x04;
  auto in = record_temp_path("damaged.mcap");
  spit(in, bytes);
  auto out = record_temp_path("repaired.mcap");
  auto r = run_cerulion({"recover", in, "-o", out, "--json"});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["chunks_dropped"] == 1);
  CHECK(j["messages"].get<int>() < 1041);
  auto info = nlohmann::json::parse(run_cerulion({"info", "--json", out}).out);
  CHECK(info["message_count"] == j["messages"]);
  CHECK(info["problems"].empty());
}

TEST_CASE("recover refuses bad input with one line and exit 1", "[cli][recover]") {
  auto empty = record_temp_path("empty.mcap");
  spit(empty, "");
  auto r = run_cerulion({"recover", empty, "-o", record_temp_path("o.mcap")}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("empty file") != std::string::npos);
  r = run_cerulion({"recover", empty}, {}, std::chrono::seconds(20));
  CHECK(r.exit_code == 2);
}
