// SPDX-License-Identifier: Apache-2.0
// The .msg grammar as rosidl reads it: one field (`TYPE name [default]`) or constant
// (`TYPE NAME=value`) a line, `#` comments outside quotes, types `T`, `T[N]`, `T[<=N]`, `T[]`,
// `string<=N`; `char` is an unsigned byte as in ROS 2, `byte` an octet.

#include "cerulion/ros2/msg_definition.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "cerulion/ros2/type_name.hpp"

namespace cerulion::ros2 {
namespace {

struct Primitive {
  std::string_view name;
  Kind kind;
};
constexpr Primitive kPrimitives[] = {
    {"bool", Kind::Bool},       {"byte", Kind::Byte},       {"char", Kind::Char},     {"int8", Kind::Int8},
    {"uint8", Kind::UInt8},     {"int16", Kind::Int16},     {"uint16", Kind::UInt16}, {"int32", Kind::Int32},
    {"uint32", Kind::UInt32},   {"int64", Kind::Int64},     {"uint64", Kind::UInt64}, {"float32", Kind::Float32},
    {"float64", Kind::Float64}, {"string", Kind::String},   {"wstring", Kind::WString},
};

/// An error at a place in the text: "<where> line L, column C: why".
struct Place {
  std::string_view where;
  std::size_t line = 0;
  Status error(std::size_t column, const std::string& why) const {
    return Status(ErrorCode::InvalidArgument, std::string(where) + " line " + std::to_string(line) + ", column " +
                                                  std::to_string(column) + ": " + why);
  }
};

bool space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/// Where `c` first is in `text` from `from` on, outside single or double quotes (a backslash
/// escapes within them); npos when nowhere.
std::size_t find_unquoted(std::string_view text, char c, std::size_t from = 0) {
  char quote = 0;
  for (std::size_t i = from; i < text.size(); ++i) {
    if (quote) {
      if (text[i] == '\\') ++i;
      else if (text[i] == quote) quote = 0;
    } else if (text[i] == '"' || text[i] == '\'') {
      quote = text[i];
    } else if (text[i] == c) {
      return i;
    }
  }
  return std::string_view::npos;
}

/// The line without its comment: a `#` outside quotes starts one.
std::string_view without_comment(std::string_view line) { return line.substr(0, find_unquoted(line, '#')); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool field_name(std::string_view s) {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::optional<std::uint32_t> count_of(std::string_view digits) {
  std::uint32_t n = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || r.ec != std::errc{} || r.ptr != digits.data() + digits.size()) return std::nullopt;
  return n;
}

/// A type token (`float64[<=3]`) of a line of package `package`, at `column`.
Result<FieldType> parse_type(std::string_view token, std::string_view package, const Place& at, std::size_t column) {
  FieldType type;
  if (const auto open = token.find('['); open != std::string_view::npos) {
    if (!token.ends_with(']')) return at.error(column + open, "'" + std::string(token) + "': an array type ends with ']'");
    const std::string_view inside = token.substr(open + 1, token.size() - open - 2);
    if (inside.empty()) {
      type.container = Container::Sequence;
    } else {
      const bool bounded = inside.starts_with("<=");
      const auto n = count_of(bounded ? inside.substr(2) : inside);
      if (!n || (!bounded && *n == 0)) {
        return at.error(column + open + 1, "'" + std::string(inside) + "' is not an array size (N, <=N or nothing)");
      }
      type.container = bounded ? Container::BoundedSequence : Container::Array;
      type.size = *n;
    }
    token = token.substr(0, open);
  }
  std::string_view base = token;
  if (const auto bound = token.find("<="); bound != std::string_view::npos) {
    base = token.substr(0, bound);
    const auto n = count_of(token.substr(bound + 2));
    if ((base != "string" && base != "wstring") || !n || *n == 0) {
      return at.error(column + bound, "'" + std::string(token) + "': only string<=N and wstring<=N take a bound");
    }
    type.string_bound = *n;
  }
  for (const auto& p : kPrimitives) {
    if (p.name == base) {
      type.kind = p.kind;
      return type;
    }
  }
  // ROS 1's builtins, which some .msg files still spell.
  if (base == "time" || base == "duration") {
    type.kind = Kind::Nested;
    type.nested = base == "time" ? "builtin_interfaces/msg/Time" : "builtin_interfaces/msg/Duration";
    return type;
  }
  auto name = parse_reference(base, package);
  if (!name) return at.error(column, "unknown type '" + std::string(base) + "': " + name.message());
  type.kind = Kind::Nested;
  type.nested = name->full();
  return type;
}

/// A quoted string literal with backslash escapes; `text` starts at the quote. The rest after it
/// is returned in `rest`.
std::optional<std::string> quoted(std::string_view text, std::string_view& rest) {
  const char quote = text[0];
  std::string out;
  for (std::size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      c = text[++i];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        default: out += c;
      }
    } else if (c == quote) {
      rest = text.substr(i + 1);
      return out;
    } else {
      out += c;
    }
  }
  return std::nullopt;
}

/// One value of a primitive kind.
Result<nlohmann::json> scalar(Kind kind, std::string_view text, const Place& at, std::size_t column) {
  const std::string s(text);
  auto bad = [&](const std::string& what) {
    return at.error(column, "'" + s + "' is not " + what);
  };
  switch (kind) {
    case Kind::Bool:
      if (s == "true" || s == "True" || s == "1") return nlohmann::json(true);
      if (s == "false" || s == "False" || s == "0") return nlohmann::json(false);
      return bad("a bool (true or false)");
    case Kind::Float32:
    case Kind::Float64: {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) return bad("a number");
      return nlohmann::json(v);
    }
    case Kind::String:
    case Kind::WString: {
      if (!s.empty() && (s[0] == '"' || s[0] == '\'')) {
        std::string_view rest;
        auto v = quoted(s, rest);
        if (!v || !trim(rest).empty()) return bad("a string literal (an unclosed quote, or text after it)");
        return nlohmann::json(std::move(*v));
      }
      return nlohmann::json(s);
    }
    case Kind::Nested:
      return at.error(column, "a field of a message type takes no default");
    default:
      break;
  }
  const bool is_signed = kind == Kind::Int8 || kind == Kind::Int16 || kind == Kind::Int32 || kind == Kind::Int64;
  const int bits = kind == Kind::Int8 || kind == Kind::UInt8 || kind == Kind::Byte || kind == Kind::Char ? 8
                   : kind == Kind::Int16 || kind == Kind::UInt16                                         ? 16
                   : kind == Kind::Int32 || kind == Kind::UInt32                                         ? 32
                                                                                                          : 64;
  if (is_signed) {
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    const std::int64_t lo = bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1));
    const std::int64_t hi = bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1;
    if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || v < lo || v > hi) {
      return bad("an int" + std::to_string(bits));
    }
    return nlohmann::json(v);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::uint64_t hi = bits == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || v > hi) {
    return bad("a uint" + std::to_string(bits) + (kind == Kind::Byte || kind == Kind::Char ? " (0 to 255)" : ""));
  }
  return nlohmann::json(v);
}

/// The items of `[a, b, "c,d"]`, split at commas outside quotes.
std::optional<std::vector<std::pair<std::string_view, std::size_t>>> items(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<std::pair<std::string_view, std::size_t>> out;
  const std::string_view inside = text.substr(1, text.size() - 2);
  if (trim(inside).empty()) return out;
  for (std::size_t start = 0; start <= inside.size();) {
    const std::size_t comma = std::min(find_unquoted(inside, ',', start), inside.size());
    std::string_view item = inside.substr(start, comma - start);
    std::size_t offset = start + 1;
    while (!item.empty() && space(item.front())) item.remove_prefix(1), ++offset;
    out.emplace_back(trim(item), offset);
    start = comma + 1;
  }
  return out;
}

/// A default or constant value of `type`.
Result<nlohmann::json> value_of(const FieldType& type, std::string_view text, const Place& at, std::size_t column) {
  if (type.container == Container::None) {
    auto v = scalar(type.kind, text, at, column);
    if (v && type.string_bound && v->is_string() && v->get_ref<const std::string&>().size() > type.string_bound) {
      return at.error(column, "the string is longer than its bound " + std::to_string(type.string_bound));
    }
    return v;
  }
  auto list = items(text);
  if (!list) return at.error(column, "'" + std::string(text) + "' is not an array value ([a, b, ...])");
  if ((type.container == Container::Array && list->size() != type.size) ||
      (type.container == Container::BoundedSequence && list->size() > type.size)) {
    return at.error(column, std::to_string(list->size()) + " values for " + type.spelled());
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [item, offset] : *list) {
    auto v = scalar(type.kind, item, at, column + offset);
    if (!v) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

/// Parses one line into `into`, whose package is `package`.
Status parse_line(std::string_view line, std::string_view package, const Place& at, MessageDefinition& into) {
  const std::string_view content = without_comment(line);
  std::size_t i = 0;
  while (i < content.size() && space(content[i])) ++i;
  if (i == content.size()) return {};
  const std::size_t type_column = i + 1;
  const std::size_t type_end = std::min(content.find_first_of(" \t", i), content.size());
  const std::string_view type_token = content.substr(i, type_end - i);
  auto type = parse_type(type_token, package, at, type_column);
  if (!type) return type.status();
  i = type_end;
  while (i < content.size() && space(content[i])) ++i;
  if (i == content.size()) return at.error(type_column, "'" + std::string(type_token) + "' has no field name after it");
  const std::size_t name_column = i + 1;
  std::size_t name_end = i;
  while (name_end < content.size() && !space(content[name_end]) && content[name_end] != '=') ++name_end;
  const std::string_view name = content.substr(i, name_end - i);
  if (!field_name(name)) {
    return at.error(name_column, "'" + std::string(name) + "' is not a field name (a letter, then letters, digits, _)");
  }
  std::size_t rest_at = name_end;
  while (rest_at < content.size() && space(content[rest_at])) ++rest_at;
  const bool constant = rest_at < content.size() && content[rest_at] == '=';
  if (constant) ++rest_at;
  while (rest_at < content.size() && space(content[rest_at])) ++rest_at;
  const std::string_view rest = trim(content.substr(rest_at));
  for (const auto& f : into.fields) {
    if (f.name == name) return at.error(name_column, "field '" + std::string(name) + "' is defined twice");
  }
  if (constant) {
    if (type->kind == Kind::Nested || type->container != Container::None) {
      return at.error(type_column, "a constant is of a primitive type, not " + type->spelled());
    }
    if (rest.empty()) return at.error(rest_at + 1, "constant '" + std::string(name) + "' has no value");
    // A string constant is the rest of the line, comment included (rosidl's rule).
    std::string_view text = rest;
    if (type->kind == Kind::String || type->kind == Kind::WString) text = trim(line.substr(rest_at));
    auto value = value_of(*type, text, at, rest_at + 1);
    if (!value) return value.status();
    into.constants.push_back({std::string(name), std::move(*type), std::move(*value)});
    return {};
  }
  Field field{std::string(name), std::move(*type), nullptr};
  if (!rest.empty()) {
    auto value = value_of(field.type, rest, at, rest_at + 1);
    if (!value) return value.status();
    field.default_value = std::move(*value);
  }
  into.fields.push_back(std::move(field));
  return {};
}

/// The lines of a text, without their line ends.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

bool separator(std::string_view line) {
  line = trim(line);
  return line.size() >= 3 && line.find_first_not_of('=') == std::string_view::npos;
}

MessageDefinition builtin(std::string_view name) {
  MessageDefinition d;
  d.name = std::string(name);
  FieldType sec, nanosec;
  sec.kind = Kind::Int32;
  nanosec.kind = Kind::UInt32;
  d.fields.push_back({"sec", sec, nullptr});
  d.fields.push_back({"nanosec", nanosec, nullptr});
  return d;
}

}  // namespace

std::string_view to_string(Kind kind) noexcept {
  for (const auto& p : kPrimitives) {
    if (p.kind == kind) return p.name;
  }
  return {};
}

std::string FieldType::spelled() const {
  std::string out = kind == Kind::Nested ? nested : std::string(to_string(kind));
  if (string_bound) out += "<=" + std::to_string(string_bound);
  switch (container) {
    case Container::None: break;
    case Container::Array: out += "[" + std::to_string(size) + "]"; break;
    case Container::BoundedSequence: out += "[<=" + std::to_string(size) + "]"; break;
    case Container::Sequence: out += "[]"; break;
  }
  return out;
}

const MessageDefinition* MessageSet::find(std::string_view name) const {
  auto it = types.find(name);
  return it == types.end() ? nullptr : &it->second;
}

std::vector<std::string> dependencies(const MessageDefinition& definition) {
  std::set<std::string> names;
  for (const auto& f : definition.fields) {
    if (f.type.kind == Kind::Nested) names.insert(f.type.nested);
  }
  return {names.begin(), names.end()};
}

Result<MessageDefinition> parse_message(std::string_view type_name, std::string_view text, std::string_view where) {
  auto name = parse_type_name(type_name);
  if (!name) return name.status();
  MessageDefinition out;
  out.name = name->full();
  Place at{where, 0};
  for (std::string_view line : lines_of(text)) {
    ++at.line;
    if (Status st = parse_line(line, name->package, at, out); !st.ok()) return st;
  }
  return out;
}

Result<MessageSet> parse_schema(std::string_view type_name, std::string_view text) {
  auto root = parse_type_name(type_name);
  if (!root) return root.status();
  MessageSet set;
  set.root = root->full();
  const std::string where = "schema " + set.root;
  const auto lines = lines_of(text);
  MessageDefinition* current = &set.types[set.root];
  current->name = set.root;
  std::string package = root->package;
  Place at{where, 0};
  bool expect_header = false;
  for (std::string_view line : lines) {
    ++at.line;
    if (separator(line)) {
      expect_header = true;
      continue;
    }
    if (expect_header) {
      const std::string_view header = trim(without_comment(line));
      if (header.empty()) continue;
      if (header.starts_with("IDL:")) return at.error(1, "IDL blocks (ros2idl) are not read; only .msg text is");
      if (!header.starts_with("MSG:")) return at.error(1, "a block after a ==== line starts with 'MSG: pkg/msg/T'");
      const std::string_view spelled = trim(header.substr(4));
      auto name = parse_reference(spelled, package);
      if (!name || spelled.find('/') == std::string_view::npos) {
        return at.error(6, "'" + std::string(spelled) + "' is not a type name (pkg/T or pkg/msg/T)");
      }
      const std::string full = name->full();
      if (set.types.count(full)) return at.error(6, "type " + full + " is defined twice");
      current = &set.types[full];
      current->name = full;
      package = name->package;
      expect_header = false;
      continue;
    }
    if (Status st = parse_line(line, package, at, *current); !st.ok()) return st;
  }
  // Every type used is defined: by a block, as a builtin, or a bare Header as std_msgs'.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, definition] : set.types) {
      for (auto& f : definition.fields) {
        if (f.type.kind != Kind::Nested || set.types.count(f.type.nested)) continue;
        if (f.type.nested == "builtin_interfaces/msg/Time" || f.type.nested == "builtin_interfaces/msg/Duration") {
          set.types.emplace(f.type.nested, builtin(f.type.nested));
          changed = true;
          break;
        }
        if (f.type.nested.ends_with("/msg/Header") && set.types.count("std_msgs/msg/Header")) {
          f.type.nested = "std_msgs/msg/Header";
          continue;
        }
        return Status(ErrorCode::InvalidArgument, where + ": type " + f.type.nested + " (field '" + f.name + "' of " +
                                                      name + ") is not defined: no 'MSG: " + f.type.nested +
                                                      "' block");
      }
      if (changed) break;
    }
  }
  return set;
}

}  // namespace cerulion::ros2
