// SPDX-License-Identifier: Apache-2.0
// A topic's type on the command line (see encoding.hpp). What fits what is core's word
// (check_topic_type); this file only turns options into a TopicType and errors into lines.

#include "encoding.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "cerulion/core/protobuf_schema.hpp"
#include "command.hpp"
#include "pub_input.hpp"

namespace cerulion::cli {
namespace {

bool custom(const std::string& name) { return name.size() > 2 && name.starts_with("x-"); }

bool listed(const std::vector<std::string_view>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The schema encodings MCAP pairs with `message_encoding`.
std::vector<std::string> fitting_schema_encodings(const std::string& message_encoding) {
  std::vector<std::string> fits;
  for (auto name : schema_encodings_for(message_encoding)) fits.emplace_back(name);
  return fits;
}

/// "a", "a or b", "a, b or c".
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

[[noreturn]] void usage(const std::string& command, const std::string& problem) {
  throw Exit{kExitUsage, fmt::format("{} (see 'cerulion {} --help')", problem, command)};
}

/// A protobuf schema is named after the message type it is for, as its descriptor set spells it
/// ("fb.Imu"): Foxglove finds no other. A given name must be one of the set's message types; without
/// one, the set's only candidate is taken. A file that is no descriptor set exits 1, a name that
/// cannot be decided exits 2.
void name_protobuf_schema(Schema& schema, bool named, const std::string& file, const std::string& command) {
  auto types = read_protobuf_message_types(schema.data);
  if (!types) throw Exit{kExitFailure, fmt::format("schema file '{}': {}", file, types.message())};
  if (named) {
    if (Status st = check_message_type(*types, schema.name); !st.ok()) {
      usage(command, fmt::format("--schema-name: schema file '{}': {}", file, st.message()));
    }
    return;
  }
  auto sole = sole_message_type(*types);
  if (!sole) usage(command, fmt::format("schema file '{}' {}: name one with --schema-name", file, sole.message()));
  schema.name = std::move(*sole);
}

}  // namespace

std::optional<std::string> default_schema_encoding(const std::string& message_encoding) {
  if (custom(message_encoding)) return std::nullopt;  // a custom encoding names its own schema's
  auto fits = fitting_schema_encodings(message_encoding);
  if (fits.size() != 1) return std::nullopt;
  return fits.front();
}

CLI::Validator message_encoding_name() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        if (input.empty()) return "an empty encoding is raw bytes: leave --encoding out";
        if (custom(input) || listed(known_message_encodings(), input)) return {};
        return check_topic_type(TopicType{input, {}}).message();
      },
      fmt::format("{{{}}}", fmt::join(known_message_encodings(), ",")), "message encoding");
}

CLI::Validator schema_encoding_name() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        if (custom(input) || listed(known_schema_encodings(), input)) return {};
        return check_topic_type(TopicType{"x-any", Schema{"s", input, {}}}).message();
      },
      fmt::format("{{{}}}", fmt::join(known_schema_encodings(), ",")), "schema encoding");
}

void add_encoding_options(CLI::App& cmd, EncodingOptions& options) {
  options.encoding_option =
      cmd.add_option("--encoding", options.encoding,
                     "Declare the topic's MCAP message encoding (or a custom x-... name); the topic's first "
                     "declaration wins, another is refused")
          ->check(message_encoding_name());
  options.schema_file_option =
      cmd.add_option("--schema-file", options.schema_file,
                     "Declare a schema with the encoding, from this file (JSON Schema text, a .proto's "
                     "FileDescriptorSet, a .msg...)")
          ->needs(options.encoding_option);
  options.schema_name_option =
      cmd.add_option("--schema-name", options.schema_name,
                     "Name of the schema (default: the file's name without its extension; for protobuf, the one "
                     "message type the descriptor set defines)")
          ->needs(options.schema_file_option);
  options.schema_encoding_option =
      cmd.add_option("--schema-encoding", options.schema_encoding,
                     "Encoding of the schema (default: the one MCAP pairs with --encoding: json jsonschema, "
                     "protobuf protobuf, flatbuffer flatbuffer, ros1 ros1msg; cdr needs it: ros2msg, ros2idl "
                     "or omgidl)")
          ->needs(options.schema_file_option)
          ->check(schema_encoding_name());
}

std::optional<TopicType> type_from_options(const EncodingOptions& options, const std::string& command) {
  if (options.encoding_option->count() == 0) return std::nullopt;
  TopicType type{options.encoding, {}};
  if (options.schema_file_option->count() == 0) {
    if (Status st = check_topic_type(type); !st.ok()) usage(command, st.message());
    return type;
  }
  const bool named = options.schema_name_option->count() > 0;
  type.schema.name = named ? options.schema_name : std::filesystem::path(options.schema_file).stem().string();
  if (named && type.schema.name.empty()) usage(command, "--schema-name: a schema needs a name");
  if (options.schema_encoding_option->count() > 0) {
    type.schema.encoding = options.schema_encoding;
  } else if (auto fitting = default_schema_encoding(type.message_encoding)) {
    type.schema.encoding = *fitting;
  } else if (custom(type.message_encoding)) {
    usage(command, fmt::format("give --schema-encoding for the schema of custom message encoding '{}'",
                               type.message_encoding));
  } else if (auto fits = fitting_schema_encodings(type.message_encoding); fits.empty()) {
    usage(command, fmt::format("message encoding '{}' takes no schema: leave --schema-file out", type.message_encoding));
  } else {
    usage(command, fmt::format("give --schema-encoding for a schema of message encoding '{}' (one of {})",
                               type.message_encoding, fmt::join(fits, ", ")));
  }
  // What the names get wrong is a usage error; what the file holds is checked once it is read.
  if (auto fits = fitting_schema_encodings(type.message_encoding);
      !custom(type.message_encoding) && std::find(fits.begin(), fits.end(), type.schema.encoding) == fits.end()) {
    usage(command, fits.empty() ? fmt::format("message encoding '{}' takes no schema: leave --schema-file out",
                                              type.message_encoding)
                                : fmt::format("message encoding '{}' takes a schema of encoding {}, not '{}'",
                                              type.message_encoding, one_of(fits), type.schema.encoding));
  }
  auto bytes = read_whole_file(options.schema_file, kMaxSchemaBytes, "the largest schema a topic carries");
  type.schema.data.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (type.schema.encoding == "protobuf") name_protobuf_schema(type.schema, named, options.schema_file, command);
  if (type.schema.name.empty()) usage(command, "--schema-name: a schema needs a name");
  if (Status st = check_topic_type(type); !st.ok()) {
    throw Exit{kExitFailure, fmt::format("schema file '{}': {}", options.schema_file, st.message())};
  }
  return type;
}

}  // namespace cerulion::cli
