// SPDX-License-Identifier: Apache-2.0
// `cerulion recover` through the real binary.

#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "cerulion/recorder/writer.hpp"
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

TEST_CASE("recover keeps a channel without messages that only the intact summary still declares", "[cli][recover]") {
  auto path = record_temp_path("quiet.mcap");
  {
    auto w = cerulion::recorder::Writer::create(path);
    REQUIRE(w.ok());
    REQUIRE(w->add_channel("/quiet", "x").ok());
    auto busy = w->add_channel("/busy", "x");
    REQUIRE(busy.ok());
    const std::byte payload[1] = {std::byte{1}};
    for (std::uint32_t i = 0; i < 10; ++i) REQUIRE(w->write(*busy, i, 100 + i, 100 + i, payload).ok());
    REQUIRE(w->close().ok());
  }
  // Flip one bit of the opcode of /quiet's Channel record in the data section (before the summary,
  // which names it again): readers skip it as an unknown record.
  std::string bytes = slurp(path);
  auto topic_at = bytes.find("/quiet");
  REQUIRE(topic_at != std::string::npos);
  const std::size_t opcode_at = topic_at - 4 - 2 - 2 - 8 - 1;  // topic length, schema id, id, record length
  REQUIRE(bytes[opcode_at] == 0x04);
  bytes[opcode_at] ^= 0x40;
  auto damaged = record_temp_path("quiet-damaged.mcap");
  spit(damaged, bytes);
  auto topics_of = [](const std::string& file) {
    auto info = run_cerulion({"info", "--json", file});
    REQUIRE(info.exit_code == 0);
    auto summary = nlohmann::json::parse(info.out);
    std::set<std::string> topics;
    for (const auto& c : summary["channels"]) topics.insert(c["topic"].get<std::string>());
    return topics;
  };
  const std::set<std::string> both{"/busy", "/quiet"};
  REQUIRE(topics_of(damaged) == both);
  auto out = record_temp_path("quiet-recovered.mcap");
  auto r = run_cerulion({"recover", damaged, "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Recovered 10 messages") != std::string::npos);
  CHECK(r.out.find("2 channels") != std::string::npos);
  CHECK(topics_of(out) == both);
}

TEST_CASE("recover counts in words that agree with the number and names its library as a recording does",
          "[cli][recover]") {
  auto path = record_temp_path("one-chunk.mcap");
  {
    auto w = cerulion::recorder::Writer::create(path);
    REQUIRE(w.ok());
    auto ch = w->add_channel("/only", "x");
    REQUIRE(ch.ok());
    const std::byte payload[1] = {std::byte{1}};
    REQUIRE(w->write(*ch, 0, 100, 100, payload).ok());
    REQUIRE(w->close().ok());
  }
  auto out = record_temp_path("one-chunk-recovered.mcap");
  auto r = run_cerulion({"recover", path, "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Recovered 1 message, 0 attachments, and 0 metadata records (1 channel, 0 schemas)") !=
        std::string::npos);
  CHECK(r.out.find("Kept 1 chunk; dropped 0 damaged chunks, 0 messages without a channel, 0 unreadable bytes") !=
        std::string::npos);
  // `cerulion record` and flashback dumps write this library too: one name, whoever wrote the file.
  const std::string library = cerulion::recorder::library();
  CHECK(library.rfind("cerulion ", 0) == 0);
  CHECK(info_json(path)["library"] == library);
  CHECK(info_json(out)["library"] == library);
}
