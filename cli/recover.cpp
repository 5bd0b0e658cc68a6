// SPDX-License-Identifier: Apache-2.0
// `cerulion recover FILE -o OUT`: rebuilds a complete, indexed recording from a truncated or damaged
// one (like `mcap recover`), and says what it kept and what it dropped.

#include <filesystem>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/recorder/recovery.hpp"
#include "command.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

struct RecoverSettings {
  std::string input;
  std::string output;
  bool force = false;
  bool json = false;
  std::string compression = "zstd";
};

void run_recover(const RecoverSettings& s) {
  std::error_code ec;
  if (std::filesystem::exists(s.output, ec) && std::filesystem::equivalent(s.input, s.output, ec)) {
    throw Exit{kExitUsage, "the output must be a different file than the input"};
  }
  recorder::WriterOptions options;
  options.overwrite = s.force;
  options.compression = s.compression == "none" ? recorder::Compression::None : recorder::Compression::Zstd;
  auto report = recorder::recover(s.input, s.output, options);
  check(report.status());
  const auto& r = report.value();
  if (s.json) {
    nlohmann::ordered_json j{{"input", s.input},
                             {"output", s.output},
                             {"input_finalized", r.input_finalized},
                             {"messages", r.messages},
                             {"schemas", r.schemas},
                             {"channels", r.channels},
                             {"attachments", r.attachments},
                             {"metadata", r.metadata},
                             {"chunks_kept", r.chunks_kept},
                             {"chunks_dropped", r.chunks_dropped},
                             {"messages_dropped", r.messages_dropped},
                             {"bytes_ignored", r.bytes_ignored},
                             {"problems", r.problems}};
    fmt::print("{}\n", j.dump());
    return;
  }
  for (const auto& p : r.problems) fmt::print(stderr, "dropped: {}\n", p);
  fmt::print("Recovered {}, {}, and {} ({}, {}) into {}.\n", counted(r.messages, "message"),
             counted(r.attachments, "attachment"), counted(r.metadata, "metadata record"), counted(r.channels, "channel"),
             counted(r.schemas, "schema"), s.output);
  fmt::print("Kept {}; dropped {}, {} without a channel, {} at the end.\n", counted(r.chunks_kept, "chunk"),
             counted(r.chunks_dropped, "damaged chunk"), counted(r.messages_dropped, "message"),
             counted(r.bytes_ignored, "unreadable byte"));
}

}  // namespace

void add_recover_command(CLI::App& app) {
  auto settings = std::make_shared<RecoverSettings>();
  auto* cmd = app.add_subcommand("recover", "Rebuild a complete, indexed recording from a truncated or damaged one");
  cmd->footer(
      "Examples:\n"
      "  cerulion recover crashed.mcap -o fixed.mcap\n"
      "  cerulion recover crashed.mcap -o fixed.mcap --force --json");
  cmd->add_option("file", settings->input, "Damaged or truncated MCAP file")->required();
  cmd->add_option("-o,--output", settings->output, "Where to write the rebuilt file")->required();
  cmd->add_flag("-f,--force", settings->force, "Overwrite OUT if it exists");
  cmd->add_option("--compression", settings->compression, "Chunk compression of OUT: zstd (default) or none")
      ->check(CLI::IsMember({"zstd", "none"}));
  cmd->add_flag("--json", settings->json, "Print the report as one JSON object (docs/json.md)");
  cmd->callback([settings] { run_recover(*settings); });
}

}  // namespace cerulion::cli
