// SPDX-License-Identifier: Apache-2.0
// `cerulion info FILE`: what a recording holds, like `mcap info`. Reads the summary when the file
// has one; on a file that was not finalized it says so and reports what the complete chunks hold.

#include <algorithm>
#include <string>

#include <fmt/core.h>

#include "cerulion/recorder/file_info.hpp"
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

void run_info(const InfoSettings& s) {
  auto described = recorder::describe_file(s.file);
  check(described.status());
  const recorder::FileInfo& info = *described;
  if (s.json) {
    fmt::print("{}\n", recorder::to_json(info));
    return;
  }
  fmt::print("file:        {} ({})\n", s.file, format_bytes(static_cast<double>(info.size_bytes)));
  fmt::print("library:     {}\n", info.library);
  if (!info.profile.empty()) fmt::print("profile:     {}\n", info.profile);
  if (info.finalized) {
    fmt::print("finalized:   yes{}\n", info.indexed ? "" : " (no usable summary: scanned)");
  } else {
    fmt::print("finalized:   NO - the recording was cut short; figures are what its complete chunks hold\n");
  }
  fmt::print("messages:    {}\n", info.messages);
  if (info.messages) {
    const auto start = info.start_ns, end = info.end_ns;
    fmt::print("duration:    {}\n", format_duration_ns(end - start));
    fmt::print("start:       {} ({}.{:09d})\n", format_time_ns(start), start / 1'000'000'000ull, start % 1'000'000'000ull);
    fmt::print("end:         {} ({}.{:09d})\n", format_time_ns(end), end / 1'000'000'000ull, end % 1'000'000'000ull);
  }
  std::string kinds;
  for (const auto& [name, n] : info.chunks_by_compression) kinds += fmt::format("{}{}: {}", kinds.empty() ? "" : ", ", name, n);
  fmt::print("chunks:      {}{}\n", info.chunks, kinds.empty() ? "" : " (" + kinds + ")");
  if (info.stored_bytes) {
    fmt::print("compression: ratio {:.2f} ({} uncompressed, {} stored)\n", info.compression_ratio,
               format_bytes(static_cast<double>(info.uncompressed_bytes)), format_bytes(static_cast<double>(info.stored_bytes)));
  }
  fmt::print("channels:    {}\n", info.channels.size());
  std::size_t width = 5;
  for (const auto& c : info.channels) width = std::max(width, c.topic.size());
  for (const auto& c : info.channels) {
    const std::string schema_text =
        !c.schema ? "no schema"
                  : fmt::format("schema {}{}", c.schema->name, c.schema->encoding.empty() ? "" : " (" + c.schema->encoding + ")");
    fmt::print("  ({:>2}) {:<{}}  {:>9} msgs  {:>9.2f} Hz  {:>10}  [{}]  {}\n", c.id, c.topic, width, c.messages, c.rate_hz,
               format_bytes(static_cast<double>(c.bytes)), c.message_encoding, schema_text);
  }
  fmt::print("attachments: {}\n", info.attachments);
  fmt::print("metadata:    {}\n", info.metadata_records);
  // Each record by name, a key and its value a line (a flashback dump's says why it was made).
  for (const auto& m : info.metadata) {
    fmt::print("  {}:\n", metadata_text(m.name));
    for (const auto& [key, value] : m.metadata) fmt::print("    {}: {}\n", metadata_text(key), value.empty() ? "\"\"" : metadata_text(value));
  }
  for (const auto& p : info.problems) fmt::print(stderr, "warning: {}\n", p);
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
