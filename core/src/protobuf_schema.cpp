// SPDX-License-Identifier: Apache-2.0
// A protobuf wire-format reader for the few fields of descriptor.proto that name things:
//
//   FileDescriptorSet    file = 1 (FileDescriptorProto, repeated)
//   FileDescriptorProto  name = 1, package = 2, dependency = 3 (repeated), message_type = 4 (repeated)
//   DescriptorProto      name = 1, nested_type = 3 (repeated)
//
// Every other field is skipped by its wire type. The input may be anyone's file: each length is
// checked against what is left, nesting is bounded (a stack overflow otherwise), and so are the
// names built (a long package times many types would otherwise grow without bound).

#include "cerulion/core/protobuf_schema.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "cerulion/core/topic_type.hpp"

namespace cerulion {
namespace {

/// As libprotobuf's default recursion limit.
constexpr int kMaxNesting = 100;
/// Listed in a message before "and N more".
constexpr std::size_t kListed = 12;

struct WireField {
  std::uint64_t number = 0;
  std::uint8_t wire_type = 0;
  std::string_view bytes;  ///< a length-delimited field's contents
  std::size_t at = 0;      ///< of its key, in the message read
  std::size_t offset = 0;  ///< of its contents, in the whole input
};

/// Fields of one message, in order. next() is false at the end, or with error() set.
class WireReader {
 public:
  WireReader(std::string_view bytes, std::size_t offset) : data_(bytes), base_(offset) {}

  bool next(WireField& field) {
    if (pos_ >= data_.size() || !error_.empty()) return false;
    const std::size_t at = pos_;
    field.at = at;
    std::uint64_t key = 0;
    if (!varint(key)) return false;
    field.number = key >> 3;
    field.wire_type = static_cast<std::uint8_t>(key & 7);
    if (field.number == 0) return fail(at, "field number 0");
    switch (field.wire_type) {
      case 0: {
        std::uint64_t ignored = 0;
        return varint(ignored);
      }
      case 1:
        return skip(at, 8);
      case 5:
        return skip(at, 4);
      case 2: {
        std::uint64_t length = 0;
        if (!varint(length)) return false;
        if (length > data_.size() - pos_) {
          return fail(at, "a field of " + std::to_string(length) + " bytes where " +
                              std::to_string(data_.size() - pos_) + " are left");
        }
        field.bytes = data_.substr(pos_, length);
        field.offset = base_ + pos_;
        pos_ += length;
        return true;
      }
      default:  // 3 and 4 are groups, which descriptors never use; 6 and 7 do not exist
        return fail(at, "wire type " + std::to_string(field.wire_type));
    }
  }

  const std::string& error() const noexcept { return error_; }

  /// A field this reader reads must be length-delimited.
  bool expect_bytes(const WireField& field) {
    if (field.wire_type == 2) return true;
    return fail(field.at, "field " + std::to_string(field.number) + " is not length-delimited");
  }

 private:
  bool varint(std::uint64_t& value) {
    const std::size_t at = pos_;
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return fail(at, "a truncated varint");
      const auto b = static_cast<std::uint8_t>(data_[pos_++]);
      value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return fail(at, "a varint longer than 10 bytes");
  }
  bool skip(std::size_t at, std::size_t n) {
    if (data_.size() - pos_ < n) return fail(at, "a truncated fixed-size field");
    pos_ += n;
    return true;
  }
  bool fail(std::size_t at, const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(base_ + at);
    pos_ = data_.size();
    return false;
  }

  std::string_view data_;
  std::size_t base_;
  std::size_t pos_ = 0;
  std::string error_;
};

Status malformed(const std::string& why) {
  return Status(ErrorCode::InvalidArgument, "not a protobuf FileDescriptorSet: " + why);
}

/// Names found so far, and the bytes they take (bounded).
struct NameCollector {
  ProtobufMessageTypes types;
  std::size_t bytes = 0;
  Status add(std::string name, bool top_level, std::vector<std::string>* file_top_level) {
    bytes += name.size();
    if (bytes > kMaxSchemaBytes) return malformed("more than " + std::to_string(kMaxSchemaBytes >> 20) + " MiB of names");
    if (top_level) {
      types.top_level.push_back(name);
      file_top_level->push_back(name);
    }
    types.all.push_back(std::move(name));
    return Status::success();
  }
};

/// A DescriptorProto: its name, then its nested types, scoped by it.
Status read_message_type(std::string_view bytes, std::size_t offset, const std::string& scope, int depth,
                         NameCollector& names, std::vector<std::string>* file_top_level) {
  if (depth > kMaxNesting) return malformed("message types nested more than " + std::to_string(kMaxNesting) + " deep");
  std::string name;
  bool named = false;
  WireReader fields(bytes, offset);
  for (WireField f; fields.next(f);) {
    if (f.number != 1) continue;
    if (!fields.expect_bytes(f)) break;
    name = f.bytes;  // the last occurrence wins, as in protobuf
    named = true;
  }
  if (!fields.error().empty()) return malformed(fields.error());
  if (!named || name.empty()) return malformed("a message type without a name at byte " + std::to_string(offset));
  const std::string full = scope.empty() ? name : scope + "." + name;
  if (Status st = names.add(full, depth == 1, file_top_level); !st.ok()) return st;
  WireReader nested(bytes, offset);
  for (WireField f; nested.next(f);) {
    if (f.number != 3) continue;
    if (!nested.expect_bytes(f)) break;
    if (Status st = read_message_type(f.bytes, f.offset, full, depth + 1, names, nullptr); !st.ok()) return st;
  }
  if (!nested.error().empty()) return malformed(nested.error());
  return Status::success();
}

struct FileNames {
  std::string name;
  std::vector<std::string> dependencies;
  std::vector<std::string> top_level;
};

/// A FileDescriptorProto: its name, package and imports, then its message types.
Result<FileNames> read_file(std::string_view bytes, std::size_t offset, NameCollector& names) {
  FileNames file;
  std::string package;
  WireReader fields(bytes, offset);
  for (WireField f; fields.next(f);) {
    if (f.number < 1 || f.number > 3) continue;
    if (!fields.expect_bytes(f)) break;
    if (f.number == 1) file.name = f.bytes;
    if (f.number == 2) package = f.bytes;
    if (f.number == 3) file.dependencies.emplace_back(f.bytes);
  }
  if (!fields.error().empty()) return malformed(fields.error());
  WireReader messages(bytes, offset);
  for (WireField f; messages.next(f);) {
    if (f.number != 4) continue;
    if (!messages.expect_bytes(f)) break;
    if (Status st = read_message_type(f.bytes, f.offset, package, 1, names, &file.top_level); !st.ok()) return st;
  }
  if (!messages.error().empty()) return malformed(messages.error());
  return file;
}

/// "a, b, c" or "a, b, ... and 3 more".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kListed; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kListed) out += " and " + std::to_string(names.size() - kListed) + " more";
  return out;
}

}  // namespace

Result<ProtobufMessageTypes> read_protobuf_message_types(std::string_view descriptor_set) {
  NameCollector names;
  std::vector<FileNames> files;
  WireReader set(descriptor_set, 0);
  for (WireField f; set.next(f);) {
    if (f.number != 1) continue;
    if (!set.expect_bytes(f)) break;
    auto file = read_file(f.bytes, f.offset, names);
    if (!file) return file.status();
    files.push_back(std::move(*file));
  }
  if (!set.error().empty()) return malformed(set.error());
  // A file that another file of the set imports is a dependency, not what the set was made for.
  std::map<std::string, std::size_t> files_named;
  for (const auto& file : files) ++files_named[file.name];
  std::set<std::string> imported;
  for (const auto& file : files) {
    for (const auto& dependency : file.dependencies) {
      auto it = files_named.find(dependency);
      if (it != files_named.end() && it->second > (dependency == file.name ? 1u : 0u)) imported.insert(dependency);
    }
  }
  for (const auto& file : files) {
    if (imported.count(file.name) == 0) {
      names.types.primary.insert(names.types.primary.end(), file.top_level.begin(), file.top_level.end());
    }
  }
  return std::move(names.types);
}

Result<std::string> sole_message_type(const ProtobufMessageTypes& types) {
  if (types.top_level.size() == 1) return types.top_level.front();
  if (types.primary.size() == 1) return types.primary.front();
  if (types.top_level.empty()) return Status(ErrorCode::InvalidArgument, "defines no message type");
  const auto& candidates = types.primary.empty() ? types.top_level : types.primary;
  return Status(ErrorCode::InvalidArgument,
                "defines " + std::to_string(candidates.size()) + " message types, not one: " + listed(candidates));
}

Status check_message_type(const ProtobufMessageTypes& types, std::string_view name) {
  if (std::find(types.all.begin(), types.all.end(), name) != types.all.end()) return Status::success();
  if (types.all.empty()) return Status(ErrorCode::InvalidArgument, "'" + std::string(name) + "': the set defines no message type");
  return Status(ErrorCode::InvalidArgument, "'" + std::string(name) + "' is not a message type of the set (it defines " +
                                                listed(types.all) + ")");
}

}  // namespace cerulion
