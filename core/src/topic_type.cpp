// SPDX-License-Identifier: Apache-2.0
// What a topic may declare, after MCAP's registry of well-known encodings
// (https://mcap.dev/spec/registry): which schema encodings each message encoding takes.

#include "cerulion/core/topic_type.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cerulion {
namespace {

struct Pairing {
  std::string_view message_encoding;
  std::vector<std::string_view> schema_encodings;  ///< what a schema of it may be
  bool schema_required;
};

const std::vector<Pairing>& pairings() {
  static const std::vector<Pairing> table = {
      {"json", {"jsonschema"}, false},
      {"protobuf", {"protobuf"}, true},
      {"cdr", {"ros2msg", "ros2idl", "omgidl"}, true},
      {"flatbuffer", {"flatbuffer"}, true},
      {"ros1", {"ros1msg"}, true},
      {"cbor", {}, false},
  };
  return table;
}

const Pairing* pairing_of(std::string_view message_encoding) {
  for (const auto& p : pairings()) {
    if (p.message_encoding == message_encoding) return &p;
  }
  return nullptr;
}

std::string joined(const std::vector<std::string_view>& names, std::string_view last_separator) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last_separator : std::string_view(", ");
    out += names[i];
  }
  return out;
}

bool custom(std::string_view encoding) { return encoding.starts_with("x-") && encoding.size() > 2; }

Status invalid(std::string message) { return Status(ErrorCode::InvalidArgument, std::move(message)); }

/// Where a JSON parse failed, from nlohmann's message ("... at line 1, column 7: ...").
std::string json_error(const nlohmann::json::parse_error& e) {
  std::string what = e.what();
  const auto colon = what.find("] ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

const std::vector<std::string_view>& known_message_encodings() noexcept {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& p : pairings()) out.push_back(p.message_encoding);
    return out;
  }();
  return names;
}

const std::vector<std::string_view>& known_schema_encodings() noexcept {
  static const std::vector<std::string_view> names = {"jsonschema", "protobuf", "ros2msg",   "ros2idl",
                                                      "omgidl",     "flatbuffer", "ros1msg"};
  return names;
}

std::vector<std::string_view> schema_encodings_for(std::string_view message_encoding) {
  const Pairing* pairing = pairing_of(message_encoding);
  return pairing == nullptr ? std::vector<std::string_view>{} : pairing->schema_encodings;
}

Status check_topic_type(const TopicType& type) {
  const std::string& enc = type.message_encoding;
  const Schema& schema = type.schema;
  if (schema.data.size() > kMaxSchemaBytes) {
    return invalid("schema '" + schema.name + "' is " + std::to_string(schema.data.size()) +
                   " bytes; a topic carries at most " + std::to_string(kMaxSchemaBytes >> 20) + " MiB");
  }
  if (!schema.empty() && schema.name.empty()) return invalid("a schema needs a name");
  if (!schema.empty() && schema.encoding.empty()) {
    return invalid("schema '" + schema.name + "' needs an encoding (" + joined(known_schema_encodings(), " or ") + ")");
  }
  const auto& schema_names = known_schema_encodings();
  const bool known_schema =
      schema.empty() || custom(schema.encoding) ||
      std::find(schema_names.begin(), schema_names.end(), schema.encoding) != schema_names.end();
  if (!known_schema) {
    return invalid("unknown schema encoding '" + schema.encoding + "' (known: " + joined(schema_names, ", ") +
                   ", or a custom x-... name)");
  }
  if (enc.empty()) {
    if (!schema.empty()) return invalid("a schema needs a message encoding (raw bytes have none)");
    return Status::success();
  }
  const Pairing* pairing = pairing_of(enc);
  if (pairing == nullptr && !custom(enc)) {
    if (std::find(schema_names.begin(), schema_names.end(), enc) != schema_names.end()) {
      return invalid("'" + enc + "' is a schema encoding, not a message encoding" +
                     (enc == "ros2msg" || enc == "ros2idl" ? " (ROS 2 messages are message encoding cdr with a " + enc +
                                                                 " schema)"
                                                           : ""));
    }
    return invalid("unknown message encoding '" + enc + "' (known: " + joined(known_message_encodings(), ", ") +
                   ", or a custom x-... name)");
  }
  if (pairing != nullptr) {
    if (schema.empty() && pairing->schema_required) {
      return invalid("message encoding '" + enc + "' needs a schema of encoding " +
                     joined(pairing->schema_encodings, " or "));
    }
    const auto& fits = pairing->schema_encodings;
    if (!schema.empty() && std::find(fits.begin(), fits.end(), schema.encoding) == fits.end()) {
      return invalid(fits.empty() ? "message encoding '" + enc + "' takes no schema"
                                  : "message encoding '" + enc + "' takes a schema of encoding " +
                                        joined(fits, " or ") + ", not '" + schema.encoding + "'");
    }
  }
  if (schema.encoding == "jsonschema") {
    try {
      const auto parsed = nlohmann::json::parse(schema.data);
      if (!parsed.is_object() && !parsed.is_boolean()) {
        return invalid("JSON Schema '" + schema.name + "' is not an object (it is a JSON " + parsed.type_name() + ")");
      }
    } catch (const nlohmann::json::parse_error& e) {
      return invalid("JSON Schema '" + schema.name + "' does not parse: " + json_error(e));
    }
  }
  return Status::success();
}

Status check_payload(const TopicType& type, std::span<const std::byte> payload) {
  if (type.message_encoding != "json") return Status::success();
  const auto* begin = reinterpret_cast<const char*>(payload.data());
  if (nlohmann::json::accept(begin, begin + payload.size())) return Status::success();
  try {
    // Parsed again only to say where it fails.
    const auto parsed = nlohmann::json::parse(begin, begin + payload.size());
  } catch (const nlohmann::json::parse_error& e) {
    return invalid("not JSON: " + json_error(e));
  }
  return invalid("not JSON");
}

std::string describe(const Schema& schema) {
  if (schema.empty()) return "no schema";
  return "schema " + schema.name + " (" + schema.encoding + ", " + std::to_string(schema.data.size()) + " B)";
}

std::string describe(const TopicType& type) {
  if (type.raw()) return "raw bytes";
  std::string out = type.message_encoding;
  if (!type.schema.empty()) out += ", " + describe(type.schema);
  return out;
}

}  // namespace cerulion
