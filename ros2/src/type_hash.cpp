// SPDX-License-Identifier: Apache-2.0
// rosidl_generator_type_description's rules: a field's type id is the primitive's id (FieldType.msg)
// plus 48 for an array, 96 for a bounded sequence, 144 for a sequence; `capacity` is the array's
// length or the sequence's bound, `string_capacity` a bounded string's bound; .msg `char` is IDL
// uint8 and `byte` octet; an empty message has rosidl's one uint8 field
// `structure_needs_at_least_one_member`.

#include "cerulion/ros2/type_hash.hpp"

#include <nettle/sha2.h>

#include <set>

namespace cerulion::ros2 {
namespace {

int primitive_id(const FieldType& t) {
  switch (t.kind) {
    case Kind::Nested: return 1;
    case Kind::Int8: return 2;
    case Kind::UInt8: return 3;
    case Kind::Char: return 3;
    case Kind::Int16: return 4;
    case Kind::UInt16: return 5;
    case Kind::Int32: return 6;
    case Kind::UInt32: return 7;
    case Kind::Int64: return 8;
    case Kind::UInt64: return 9;
    case Kind::Float32: return 10;
    case Kind::Float64: return 11;
    case Kind::Bool: return 15;
    case Kind::Byte: return 16;
    case Kind::String: return t.string_bound ? 21 : 17;
    case Kind::WString: return t.string_bound ? 22 : 18;
  }
  return 0;
}

int type_id(const FieldType& t) {
  switch (t.container) {
    case Container::None: return primitive_id(t);
    case Container::Array: return primitive_id(t) + 48;
    case Container::BoundedSequence: return primitive_id(t) + 96;
    case Container::Sequence: return primitive_id(t) + 144;
  }
  return 0;
}

/// A JSON string as Python's json.dumps(ensure_ascii=True) writes it.
void put_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void put_field(std::string& out, std::string_view name, int id, std::uint32_t capacity, std::uint32_t string_capacity,
               std::string_view nested) {
  out += "{\"name\": ";
  put_string(out, name);
  out += ", \"type\": {\"type_id\": " + std::to_string(id) + ", \"capacity\": " + std::to_string(capacity) +
         ", \"string_capacity\": " + std::to_string(string_capacity) + ", \"nested_type_name\": ";
  put_string(out, nested);
  out += "}}";
}

void put_type(std::string& out, const MessageDefinition& d) {
  out += "{\"type_name\": ";
  put_string(out, d.name);
  out += ", \"fields\": [";
  if (d.fields.empty()) put_field(out, "structure_needs_at_least_one_member", 3, 0, 0, "");
  for (std::size_t i = 0; i < d.fields.size(); ++i) {
    const auto& t = d.fields[i].type;
    if (i) out += ", ";
    const std::uint32_t capacity = t.container == Container::Array || t.container == Container::BoundedSequence ? t.size : 0;
    put_field(out, d.fields[i].name, type_id(t), capacity, t.string_bound, t.kind == Kind::Nested ? t.nested : "");
  }
  out += "]}";
}

}  // namespace

std::string type_description_json(const MessageSet& set) {
  std::set<std::string> referenced;
  std::vector<std::string> queue = dependencies(set.root_type());
  while (!queue.empty()) {
    std::string name = std::move(queue.back());
    queue.pop_back();
    if (!referenced.insert(name).second) continue;
    if (const auto* d = set.find(name)) {
      for (auto& dep : dependencies(*d)) queue.push_back(std::move(dep));
    }
  }
  std::string out = "{\"type_description\": ";
  put_type(out, set.root_type());
  out += ", \"referenced_type_descriptions\": [";
  bool first = true;
  for (const auto& name : referenced) {
    const auto* d = set.find(name);
    if (!d) continue;  // parse_schema() leaves none undefined
    if (!first) out += ", ";
    first = false;
    put_type(out, *d);
  }
  out += "]}";
  return out;
}

std::string type_hash(const MessageSet& set) {
  const std::string json = type_description_json(set);
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, json.size(), reinterpret_cast<const std::uint8_t*>(json.data()));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "RIHS01_";
  for (std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string typehash_user_data(const MessageSet& set) { return "typehash=" + type_hash(set) + ";"; }

}  // namespace cerulion::ros2
