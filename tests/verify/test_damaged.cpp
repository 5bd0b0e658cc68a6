// SPDX-License-Identifier: Apache-2.0
// A damaged golden file never blames the node: cut short anywhere, one byte changed inside a chunk,
// or fewer messages than its own statistics count, it cannot serve (exit 4 naming why), or, when
// allowed, its intact part is verified and the verification says so. Before, a recording cut in
// half was verified on what was left (exit 0) or blamed the node for "extra" outputs, and a changed
// byte in a chunk gave a difference for every message after it.

#include "helpers.hpp"

#include <filesystem>
#include <fstream>

#include "cerulion/verify/report.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using verify::Verdict;

namespace {

/// The filter node's golden file over `count` inputs, written again in chunks of about `chunk_size`
/// uncompressed bytes: a file with many chunks to damage.
std::string chunked_golden(std::size_t count, std::uint64_t chunk_size) {
  auto reader = recorder::Reader::open(record_golden(count));
  REQUIRE(reader.ok());
  const std::string path = fresh_temp_path("chunked-golden.mcap");
  recorder::WriterOptions options;
  options.chunk_size = chunk_size;
  auto writer = recorder::Writer::create(path, options);
  REQUIRE(writer.ok());
  for (const auto& [id, schema] : reader->summary().schemas) REQUIRE(writer->add_schema(schema).ok());
  for (const auto& [id, channel] : reader->summary().channels) REQUIRE(writer->add_channel(channel).ok());
  recorder::ReadMessagesOptions in_order;
  in_order.order = recorder::ReadOrder::LogTime;
  REQUIRE(reader->read_messages(in_order, [&](const recorder::MessageView& m) {
    const auto& msg = m.message;
    return writer->write(msg.channel_id, msg.sequence, msg.log_time, msg.publish_time, msg.data).ok();
  }).ok());
  REQUIRE(writer->close().ok());
  return path;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string written(const std::string& bytes, const std::string& stem) {
  const std::string path = fresh_temp_path(stem);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::uint64_t le(const std::string& bytes, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return v;
}

/// `v` of a verification of a damaged file with --allow-damaged: the same outputs over an intact
/// part of the file's inputs (`recorded` of them, or at most `recorded` when it was cut short and
/// only those read are known), said in the text and JSON reports.
void check_intact_part_verified(const verify::Verification& v, std::uint64_t recorded, bool cut) {
  const std::string text = verify::text_report(v);
  INFO(v.problem << "\n" << text);
  CHECK(v.verdict == Verdict::Same);
  CHECK(v.intact_part_only);
  if (cut) {
    CHECK(v.recorded_inputs <= recorded);
    CHECK(v.inputs_verified <= v.recorded_inputs);
  } else {
    CHECK(v.recorded_inputs == recorded);
    CHECK(v.inputs_verified < v.recorded_inputs);
  }
  CHECK(v.inputs_verified > 0);
  REQUIRE(v.runs.size() == 1);
  CHECK(v.runs[0].inputs == v.inputs_verified);
  CHECK(text.find("the recording is damaged (") != std::string::npos);
  CHECK(text.find("only its intact part was verified, " + std::to_string(v.inputs_verified) + " of its " +
                  std::to_string(v.recorded_inputs) + " inputs") != std::string::npos);
  CHECK(text.find("verdict: same (on the intact part of a damaged recording)") != std::string::npos);
  const auto json = nlohmann::json::parse(verify::json_report(v));
  CHECK_FALSE(json["damage"].empty());
  CHECK(json["intact_part"]["inputs"] == v.inputs_verified);
}

}  // namespace

TEST_CASE("A golden file cut short at any point cannot serve, and with allow_damaged its intact part verifies",
          "[verify][damaged]") {
  constexpr std::size_t kInputs = 120;
  const std::string golden = chunked_golden(kInputs, 2048);
  const std::string bytes = file_bytes(golden);
  for (const double at : {0.3, 0.5, 0.61, 0.77, 0.9}) {
    const auto cut = static_cast<std::size_t>(static_cast<double>(bytes.size()) * at);
    INFO("cut at byte " << cut << " of " << bytes.size());
    const std::string path = written(bytes.substr(0, cut), "cut-golden.mcap");
    auto options = imu_verify_options(path);
    const auto refused = verify::verify(options);
    INFO(refused.problem);
    CHECK(refused.verdict == Verdict::RecordingUnusable);
    CHECK(refused.problem.find(path + " is damaged: file is not finalized") == 0);
    CHECK(refused.problem.find("--allow-damaged") != std::string::npos);
    CHECK(refused.runs.empty());  // the node was never started: nothing of it is judged

    options.allow_damaged = true;
    check_intact_part_verified(verify::verify(options), kInputs, true);
  }
}

TEST_CASE("A golden file with one byte changed inside a chunk cannot serve, and with allow_damaged the part before it verifies",
          "[verify][damaged]") {
  constexpr std::size_t kInputs = 120;
  const std::string golden = chunked_golden(kInputs, 2048);
  auto reader = recorder::Reader::open(golden);
  REQUIRE(reader.ok());
  const auto& chunks = reader->summary().chunk_indexes;
  REQUIRE(chunks.size() >= 4);
  // A chunk past the middle: its middle byte, in its stored records.
  const auto& chunk = chunks[chunks.size() * 2 / 3];
  std::string bytes = file_bytes(golden);
  const std::size_t at = static_cast<std::size_t>(chunk.chunk_start_offset + chunk.chunk_length / 2);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
  const std::string path = written(bytes, "changed-golden.mcap");

  auto options = imu_verify_options(path);
  const auto refused = verify::verify(options);
  INFO(refused.problem);
  CHECK(refused.verdict == Verdict::RecordingUnusable);
  CHECK(refused.problem.find(path + " is damaged: chunk at offset " + std::to_string(chunk.chunk_start_offset)) == 0);
  CHECK(refused.runs.empty());

  options.allow_damaged = true;
  const auto v = verify::verify(options);
  check_intact_part_verified(v, kInputs, false);
  // The intact part ends where the damaged chunk starts.
  CHECK(v.intact_before == chunk.message_start_time);
}

TEST_CASE("A golden file whose statistics count more messages than it holds cannot serve, even with allow_damaged",
          "[verify][damaged]") {
  const std::string golden = record_golden(10);
  std::string bytes = file_bytes(golden);
  // The Footer (opcode, length, summary start, summary offset start, summary CRC) before the magic.
  const std::size_t footer = bytes.size() - 8 - 29;
  REQUIRE(static_cast<unsigned char>(bytes[footer]) == 0x02);
  std::size_t record = static_cast<std::size_t>(le(bytes, footer + 9, 8));
  bool bumped = false;
  while (record < footer && !bumped) {
    const auto opcode = static_cast<unsigned char>(bytes[record]);
    const auto length = static_cast<std::size_t>(le(bytes, record + 1, 8));
    if (opcode == 0x0B) {
      // Statistics: counts and times (42 bytes), then the channel counts' byte length and the
      // first channel's (id, count): one more message than there is.
      const std::size_t first_count = record + 9 + 42 + 4 + 2;
      const std::uint64_t count = le(bytes, first_count, 8) + 1;
      for (int i = 0; i < 8; ++i) bytes[first_count + static_cast<std::size_t>(i)] = static_cast<char>((count >> (8 * i)) & 0xff);
      bumped = true;
    }
    record += 9 + length;
  }
  REQUIRE(bumped);
  for (int i = 0; i < 4; ++i) bytes[footer + 25 + static_cast<std::size_t>(i)] = 0;  // no summary CRC to check
  const std::string path = written(bytes, "overcounted-golden.mcap");

  auto options = imu_verify_options(path);
  const auto refused = verify::verify(options);
  INFO(refused.problem);
  CHECK(refused.verdict == Verdict::RecordingUnusable);
  CHECK(refused.problem.find(path + " is damaged: its statistics count ") == 0);
  CHECK(refused.problem.find(" could be read") != std::string::npos);
  options.allow_damaged = true;
  const auto still = verify::verify(options);
  INFO(still.problem);
  CHECK(still.verdict == Verdict::RecordingUnusable);
  CHECK(still.problem.find("where cannot be told") != std::string::npos);
  CHECK(still.runs.empty());
}

TEST_CASE("verify exits 4 naming why for a golden file cut short, and 0 with --allow-damaged saying what it verified",
          "[verify][damaged][cli]") {
  const std::string golden = chunked_golden(60, 2048);
  const std::string bytes = file_bytes(golden);
  const std::string path = written(bytes.substr(0, bytes.size() / 2), "cut-golden-cli.mcap");
  const auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"verify", path, "--input", "/imu", "--output", "/imu/filtered"};
    a.insert(a.end(), extra.begin(), extra.end());
    a.push_back("--");
    a.push_back(VERIFY_IMU_FILTER);
    return a;
  };
  auto refused = run_cerulion(args({}));
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 4);
  CHECK(refused.err.find("cerulion: " + path + " is damaged: file is not finalized") == 0);
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  const std::string json = fresh_temp_path("damaged.json");
  auto allowed = run_cerulion(args({"--allow-damaged", "--json", json}));
  INFO(allowed.out << allowed.err);
  CHECK(allowed.exit_code == 0);
  CHECK(allowed.out.find("only its intact part was verified") != std::string::npos);
  CHECK(allowed.out.find("verdict: same (on the intact part of a damaged recording)") != std::string::npos);
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  CHECK(report["intact_part"]["inputs"].get<int>() > 0);
  CHECK(report["intact_part"]["recorded_inputs"].get<int>() <= 60);
}
