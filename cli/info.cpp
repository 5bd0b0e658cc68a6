// SPDX-License-Identifier: Apache-2.0
// `cerulion info FILE`: what a recording holds, like `mcap info`. Reads the summary when the file
// has one; on a file that was not finalized it says so and reports what the complete chunks hold.

#include <map>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/recorder/reader.hpp"
#include "command.hpp"
#include "message_format.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

struct InfoSettings {
  std::string file;
  bool json = false;
};

// Text from the file as one line a terminal shows safely, cut when very long.
std::string metadata_text(std::string_view text) {
  return render_message_text({reinterpret_cast<const std::byte*>(text.data()), text.size()}, 1000);
}

struct ChannelFigures {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

void run_info(const InfoSettings& s) {
  auto reader = recorder::Reader::open(s.file);
  check(reader.status());
  // Per-channel byte counts are not in the summary: read the messages (chunk by chunk).
  std::map<std::uint16_t, ChannelFigures> figures;
  check(reader->read_messages({}, [&](const recorder::MessageView& m) {
    auto& f = figures[m.message.channel_id];
    ++f.messages;
    f.bytes += m.message.data.size();
    return true;
  }));
  const auto& sum = reader->summary();
  const auto& st = sum.statistics;
  std::uint64_t messages = 0;
  for (const auto& [id, f] : figures) messages += f.messages;
  std::uint64_t stored = 0, uncompressed = 0;
  std::map<std::string, std::uint64_t> by_compression;
  for (const auto& ci : sum.chunk_indexes) {
    stored += ci.compressed_size;
    uncompressed += ci.uncompressed_size;
    ++by_compression[ci.compression.empty() ? "none" : ci.compression];
  }
  double ratio = stored ? static_cast<double>(uncompressed) / static_cast<double>(stored) : 1.0;
  std::uint64_t start = messages ? st.message_start_time : 0;
  std::uint64_t end = messages ? st.message_end_time : 0;
  double duration_s = static_cast<double>(end - start) / 1e9;

  if (s.json) {
    nlohmann::ordered_json j;
    j["file"] = s.file;
    j["size_bytes"] = sum.file_size;
    j["finalized"] = sum.finalized;
    j["indexed"] = sum.indexed;
    j["library"] = sum.header.library;
    j["profile"] = sum.header.profile;
    j["message_count"] = messages;
    j["start_log_time_ns"] = messages ? nlohmann::ordered_json(start) : nlohmann::ordered_json(nullptr);
    j["end_log_time_ns"] = messages ? nlohmann::ordered_json(end) : nlohmann::ordered_json(nullptr);
    j["duration_s"] = duration_s;
    j["chunk_count"] = sum.chunk_indexes.size();
    j["compression_ratio"] = ratio;
    j["compression"] = by_compression;
    j["attachment_count"] = sum.attachment_indexes.size() > st.attachment_count ? sum.attachment_indexes.size()
                                                                                : st.attachment_count;
    j["metadata_count"] = sum.metadata_indexes.size() > st.metadata_count ? sum.metadata_indexes.size()
                                                                          : st.metadata_count;
    auto channels = nlohmann::ordered_json::array();
    for (const auto& [id, ch] : sum.channels) {
      auto f = figures[id];
      auto schema = sum.schemas.find(ch.schema_id);
      const bool has_schema = schema != sum.schemas.end();
      channels.push_back({{"id", id},
                          {"topic", ch.topic},
                          {"message_encoding", ch.message_encoding},
                          {"schema", has_schema ? nlohmann::ordered_json{{"name", schema->second.name},
                                                                         {"encoding", schema->second.encoding},
                                                                         {"bytes", schema->second.data.size()}}
                                                : nlohmann::ordered_json(nullptr)},
                          {"message_count", f.messages},
                          {"bytes", f.bytes},
                          {"rate_hz", duration_s > 0 ? static_cast<double>(f.messages) / duration_s : 0.0},
                          {"metadata", ch.metadata}});
    }
    j["channels"] = channels;
    auto metadata = nlohmann::ordered_json::array();
    auto problems = reader->problems();
    if (auto md = reader->read_metadata(); md.ok()) {
      for (const auto& m : md.value()) metadata.push_back({{"name", m.name}, {"metadata", m.metadata}});
    } else {
      problems.push_back("metadata records cannot be read: " + md.message());
    }
    j["metadata"] = metadata;
    j["problems"] = problems;
    fmt::print("{}\n", j.dump());
    return;
  }

  fmt::print("file:        {} ({})\n", s.file, format_bytes(static_cast<double>(sum.file_size)));
  fmt::print("library:     {}\n", sum.header.library);
  if (!sum.header.profile.empty()) fmt::print("profile:     {}\n", sum.header.profile);
  if (sum.finalized) {
    fmt::print("finalized:   yes{}\n", sum.indexed ? "" : " (no usable summary: scanned)");
  } else {
    fmt::print("finalized:   NO - the recording was cut short; figures are what its complete chunks hold\n");
  }
  fmt::print("messages:    {}\n", messages);
  if (messages) {
    fmt::print("duration:    {}\n", format_duration_ns(end - start));
    fmt::print("start:       {} ({}.{:09d})\n", format_time_ns(start), start / 1'000'000'000ull, start % 1'000'000'000ull);
    fmt::print("end:         {} ({}.{:09d})\n", format_time_ns(end), end / 1'000'000'000ull, end % 1'000'000'000ull);
  }
  std::string kinds;
  for (const auto& [name, n] : by_compression) kinds += fmt::format("{}{}: {}", kinds.empty() ? "" : ", ", name, n);
  fmt::print("chunks:      {}{}\n", sum.chunk_indexes.size(), kinds.empty() ? "" : " (" + kinds + ")");
  if (stored) {
    fmt::print("compression: ratio {:.2f} ({} uncompressed, {} stored)\n", ratio,
               format_bytes(static_cast<double>(uncompressed)), format_bytes(static_cast<double>(stored)));
  }
  fmt::print("channels:    {}\n", sum.channels.size());
  std::size_t width = 5;
  for (const auto& [id, ch] : sum.channels) width = std::max(width, ch.topic.size());
  for (const auto& [id, ch] : sum.channels) {
    auto f = figures[id];
    double rate = duration_s > 0 ? static_cast<double>(f.messages) / duration_s : 0.0;
    auto schema = sum.schemas.find(ch.schema_id);
    const std::string schema_text = schema == sum.schemas.end()
                                        ? "no schema"
                                        : fmt::format("schema {}{}", schema->second.name,
                                                      schema->second.encoding.empty() ? "" : " (" + schema->second.encoding + ")");
    fmt::print("  ({:>2}) {:<{}}  {:>9} msgs  {:>9.2f} Hz  {:>10}  [{}]  {}\n", id, ch.topic, width, f.messages, rate,
               format_bytes(static_cast<double>(f.bytes)), ch.message_encoding, schema_text);
  }
  fmt::print("attachments: {}\n", std::max<std::uint64_t>(sum.attachment_indexes.size(), st.attachment_count));
  fmt::print("metadata:    {}\n", std::max<std::uint64_t>(sum.metadata_indexes.size(), st.metadata_count));
  auto problems = reader->problems();
  if (auto md = reader->read_metadata(); md.ok()) {
    // Each record by name, a key and its value a line (a flashback dump's says why it was made).
    for (const auto& m : md.value()) {
      fmt::print("  {}:\n", metadata_text(m.name));
      for (const auto& [key, value] : m.metadata) fmt::print("    {}: {}\n", metadata_text(key), value.empty() ? "\"\"" : metadata_text(value));
    }
  } else {
    problems.push_back("metadata records cannot be read: " + md.message());
  }
  for (const auto& p : problems) fmt::print(stderr, "warning: {}\n", p);
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto settings = std::make_shared<InfoSettings>();
  auto* cmd = app.add_subcommand("info", "Summarize a recording: duration, messages, chunks, compression, channels");
  cmd->footer(
      "Examples:\n"
      "  cerulion info run.mcap\n"
      "  cerulion info run_0.mcap --json   # the first file of a split recording");
  cmd->add_option("file", settings->file, "MCAP file")->required();
  cmd->add_flag("--json", settings->json, "Print one JSON object instead of text (docs/json.md)");
  cmd->callback([settings] { run_info(*settings); });
}

}  // namespace cerulion::cli
