// SPDX-License-Identifier: Apache-2.0
// The reader against the official MCAP conformance files and the real sample files.

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <vector>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/recovery.hpp"
#include "helpers.hpp"

using namespace rectest;

namespace {

/// One official conformance file and the JSON of what a reader must see in it.
struct ConformanceCase {
  fs::path mcap;
  nlohmann::json listing;
};

/// Every .mcap under mcap-conformance/ that has its .json beside it; nullopt (with a WARN saying
/// it skipped) when the shared reference folder is absent, as in a user's clone.
std::optional<std::vector<ConformanceCase>> conformance_cases() {
  fs::path dir = reference_dir() / "mcap-conformance";
  if (!fs::exists(dir)) {
    WARN("skipped: " << dir.string() << " is absent");
    return std::nullopt;
  }
  std::vector<ConformanceCase> cases;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".mcap") continue;
    fs::path json_path = entry.path();
    json_path.replace_extension(".json");
    if (!fs::exists(json_path)) continue;
    cases.push_back({entry.path(), nlohmann::json::parse(read_all(json_path.string()))});
  }
  return cases;
}

}  // namespace

TEST_CASE("The streaming reader reproduces the records every conformance file lists", "[recorder][conformance]") {
  auto cases = conformance_cases();
  if (!cases) return;
  int files = 0;
  for (const auto& c : *cases) {
    ++files;
    INFO(c.mcap.filename().string());
    const auto& expected = c.listing.at("records");
    auto got = nlohmann::json::array();
    std::vector<std::string> problems;
    Status st = stream_records(c.mcap.string(), [&](const Record& r) {
      auto j = to_conformance_json(r);
      if (!j.is_null()) got.push_back(std::move(j));
      return true;
    }, &problems);
    CHECK(st.ok());
    CHECK(problems.empty());
    CHECK(got.dump() == expected.dump());
  }
  CHECK(files > 100);
}

TEST_CASE("The indexed reader returns the messages of every conformance file", "[recorder][conformance]") {
  auto cases = conformance_cases();
  if (!cases) return;
  for (const auto& c : *cases) {
    INFO(c.mcap.filename().string());
    const auto& expected = c.listing.at("records");
    auto want = nlohmann::json::array();
    std::size_t metadata = 0, attachments = 0;
    for (const auto& r : expected) {
      if (r["type"] == "Message") want.push_back(r);
      if (r["type"] == "Metadata") ++metadata;
      if (r["type"] == "Attachment") ++attachments;
    }
    auto reader = Reader::open(c.mcap.string());
    REQUIRE(reader.ok());
    CHECK(reader->summary().finalized);
    CHECK(reader->problems().empty());
    auto got = nlohmann::json::array();
    Status st = reader->read_messages({}, [&](const MessageView& m) {
      got.push_back(to_conformance_json(m.message));
      return true;
    });
    CHECK(st.ok());
    CHECK(got.dump() == want.dump());
    CHECK(reader->summary().statistics.message_count == want.size());
    auto md = reader->read_metadata();
    REQUIRE(md.ok());
    CHECK(md->size() == metadata);
    auto at = reader->read_attachments();
    REQUIRE(at.ok());
    CHECK(at->size() == attachments);
  }
}

namespace {
// Messages per topic, read in `order` (checked to be log-time order when that was asked for).
std::map<std::string, std::uint64_t> count_topics(Reader& reader, ReadOrder order = ReadOrder::File) {
  std::map<std::string, std::uint64_t> counts;
  ReadMessagesOptions options;
  options.order = order;
  std::uint64_t latest = 0;
  std::uint64_t earlier_than_previous = 0;
  Status st = reader.read_messages(options, [&](const MessageView& m) {
    ++counts[m.channel.topic];
    if (m.message.log_time < latest) ++earlier_than_previous;
    latest = std::max(latest, m.message.log_time);
    return true;
  });
  REQUIRE(st.ok());
  if (order == ReadOrder::LogTime) CHECK(earlier_than_previous == 0);
  return counts;
}
}  // namespace

TEST_CASE("The sample files written by the official writer read back with their manifest counts", "[recorder][samples]") {
  fs::path dir = reference_dir() / "mcap-samples";
  if (!fs::exists(dir / "manifest.json")) {
    WARN("skipped: " << dir.string() << " is absent");
    return;
  }
  auto manifest = nlohmann::json::parse(read_all((dir / "manifest.json").string()));
  for (const auto& item : manifest) {
    std::string file = item["file"];
    INFO(file);
    auto reader = Reader::open((dir / file).string());
    REQUIRE(reader.ok());
    auto counts = count_topics(*reader);
    CHECK(count_topics(*reader, ReadOrder::LogTime) == counts);
    std::uint64_t total = 0;
    for (const auto& [topic, n] : counts) total += n;
    if (item["truncated"].get<bool>()) {
      CHECK_FALSE(reader->summary().finalized);
      CHECK(total == 586);  // what the complete chunks hold, per the reference notes
      CHECK_FALSE(reader->problems().empty());
    } else {
      CHECK(reader->summary().finalized);
      CHECK(reader->summary().indexed);
      CHECK(reader->problems().empty());
      for (const auto& [topic, n] : item["messages"].items()) CHECK(counts[topic] == n.get<std::uint64_t>());
      CHECK(reader->summary().statistics.message_count == total);
    }
  }
}

TEST_CASE("Recovery keeps every message of every conformance file", "[recorder][conformance][recovery]") {
  auto cases = conformance_cases();
  if (!cases) return;
  for (const auto& c : *cases) {
    INFO(c.mcap.filename().string());
    std::size_t want = 0;
    const auto& listing = c.listing;
    for (const auto& r : listing.at("records")) want += r["type"] == "Message";
    auto out = temp_path("conf-recovered.mcap");
    auto report = recover(c.mcap.string(), out);
    REQUIRE(report.ok());
    CHECK(report->messages == want);
    CHECK(report->input_finalized);
    auto r = Reader::open(out);
    REQUIRE(r.ok());
    CHECK(r->summary().indexed);
    CHECK(r->summary().statistics.message_count == want);
  }
}
