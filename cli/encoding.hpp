// SPDX-License-Identifier: Apache-2.0
#pragma once
// A topic's type on the command line: `--encoding E [--schema-file F --schema-name N
// --schema-encoding SE]` turned into a cerulion::TopicType, and the checks of its names.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::cli {

struct EncodingOptions {
  std::string encoding;
  std::string schema_file;
  std::string schema_name;
  std::string schema_encoding;

  CLI::Option* encoding_option = nullptr;
  CLI::Option* schema_file_option = nullptr;
  CLI::Option* schema_name_option = nullptr;
  CLI::Option* schema_encoding_option = nullptr;
};

/// Adds --encoding, --schema-file, --schema-name and --schema-encoding to `cmd`.
void add_encoding_options(CLI::App& cmd, EncodingOptions& options);

/// The type the options declare, nullopt without --encoding. The schema name defaults to the
/// file's stem (for a protobuf schema, to the one message type its descriptor set defines), its
/// encoding to the one MCAP's registry pairs with the message encoding when there is exactly one.
/// What the options get wrong exits 2 (naming `command`'s --help), as does a protobuf schema name
/// that is not a message type of its set, or cannot be derived from it; a schema file that cannot
/// be read, or does not hold a valid schema, exits 1.
std::optional<TopicType> type_from_options(const EncodingOptions& options, const std::string& command);

/// The schema encoding MCAP's registry pairs with `message_encoding` when there is exactly one
/// (json: jsonschema, protobuf: protobuf, flatbuffer: flatbuffer, ros1: ros1msg).
std::optional<std::string> default_schema_encoding(const std::string& message_encoding);

/// Accepts a known MCAP message encoding or a custom x-... name; otherwise says which there are.
CLI::Validator message_encoding_name();
/// Accepts a known MCAP schema encoding or a custom x-... name; otherwise says which there are.
CLI::Validator schema_encoding_name();

}  // namespace cerulion::cli
