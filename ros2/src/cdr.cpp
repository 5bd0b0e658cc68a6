// SPDX-License-Identifier: Apache-2.0
// The type is compiled once into plain structs (no map lookups per message). A failure deep in a
// message is built on the way out: the innermost call says what is wrong, each level above puts
// its field name in front, so a good message costs no string work.

#include "cerulion/ros2/cdr.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <functional>
#include <set>

namespace cerulion::ros2 {

struct CdrCodec::Compiled {
  struct Type;
  struct Member {
    std::string name;
    FieldType type;
    const Type* nested = nullptr;
    nlohmann::json default_value;
  };
  struct Type {
    std::string name;
    std::vector<Member> members;
  };
  std::map<std::string, Type, std::less<>> types;
  const Type* root = nullptr;
};

namespace {

using Compiled = CdrCodec::Compiled;

std::size_t size_of(Kind kind) {
  switch (kind) {
    case Kind::Bool: case Kind::Byte: case Kind::Char: case Kind::Int8: case Kind::UInt8: return 1;
    case Kind::Int16: case Kind::UInt16: return 2;
    case Kind::Int32: case Kind::UInt32: case Kind::Float32: return 4;
    case Kind::Int64: case Kind::UInt64: case Kind::Float64: return 8;
    default: return 0;  // strings and messages
  }
}

bool bytes_kind(Kind kind) { return kind == Kind::UInt8 || kind == Kind::Byte; }

/// A failure with the path to the field, built from the inside out.
struct Failure {
  std::string path;
  std::string why;
  void enter(std::string_view name) {
    if (!path.empty() && path.front() != '[') path.insert(path.begin(), '.');
    path.insert(0, name);
  }
  void index(std::size_t i) {
    if (!path.empty() && path.front() != '[') path.insert(path.begin(), '.');
    path.insert(0, "[" + std::to_string(i) + "]");
  }
  Status status(const std::string& type) const {
    return Status(ErrorCode::InvalidArgument,
                  type + (path.empty() ? std::string() : " field " + path) + ": " + why);
  }
};

std::string hex_header(std::span<const std::byte> m) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 4 && i < m.size(); ++i) {
    const auto b = static_cast<unsigned>(m[i]);
    if (i) out += ' ';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// ---- reading ----

class Reader {
 public:
  Reader(std::span<const std::byte> body, bool little, bool xcdr2)
      : data_(reinterpret_cast<const std::uint8_t*>(body.data())), size_(body.size()), little_(little),
        max_align_(xcdr2 ? 4 : 8), xcdr2_(xcdr2) {}

  bool xcdr2() const { return xcdr2_; }
  std::size_t remaining() const { return size_ - pos_; }

  bool align(std::size_t n, Failure& f) {
    n = std::min(n, max_align_);
    const std::size_t to = (pos_ + n - 1) & ~(n - 1);
    if (to > size_) return short_by(to - size_ + n, f);
    pos_ = to;
    return true;
  }
  bool short_by(std::size_t more, Failure& f) {
    f.why = "the message ends at byte " + std::to_string(size_ + 4) + ", " + std::to_string(more) +
            " more needed";
    return false;
  }
  template <typename T>
  bool read(T& out, Failure& f) {
    if (!align(sizeof(T), f)) return false;
    if (sizeof(T) > remaining()) return short_by(sizeof(T) - remaining(), f);
    std::memcpy(&out, data_ + pos_, sizeof(T));
    if (little_ != (std::endian::native == std::endian::little)) out = swap(out);
    pos_ += sizeof(T);
    return true;
  }
  bool take(std::size_t n, const std::uint8_t*& out, Failure& f) {
    if (n > remaining()) return short_by(n - remaining(), f);
    out = data_ + pos_;
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  static T swap(T v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    std::memcpy(&v, b, sizeof(T));
    return v;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  bool little_;
  std::size_t max_align_;
  bool xcdr2_;
};

bool read_scalar(Reader& in, const FieldType& t, nlohmann::ordered_json& out, Failure& f) {
  switch (t.kind) {
    case Kind::Bool: { std::uint8_t v{}; if (!in.read(v, f)) return false; out = v != 0; return true; }
    case Kind::Byte: case Kind::Char: case Kind::UInt8: { std::uint8_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Int8: { std::int8_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Int16: { std::int16_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::UInt16: { std::uint16_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Int32: { std::int32_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::UInt32: { std::uint32_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Int64: { std::int64_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::UInt64: { std::uint64_t v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Float32: { float v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::Float64: { double v{}; if (!in.read(v, f)) return false; out = v; return true; }
    case Kind::String: {
      std::uint32_t n = 0;
      const std::uint8_t* at = nullptr;
      if (!in.read(n, f) || !in.take(n, at, f)) return false;
      // The length counts the terminating NUL; some writers send 0 for an empty string.
      std::size_t length = n;
      if (length > 0 && at[length - 1] == 0) --length;
      if (t.string_bound && length > t.string_bound) {
        f.why = "a string of " + std::to_string(length) + " bytes, over its bound " + std::to_string(t.string_bound);
        return false;
      }
      out = std::string(reinterpret_cast<const char*>(at), length);
      return true;
    }
    default:
      f.why = "unreadable type";
      return false;
  }
}

bool read_struct(Reader& in, const Compiled::Type& type, nlohmann::ordered_json& out, Failure& f);

bool read_element(Reader& in, const Compiled::Member& m, nlohmann::ordered_json& out, Failure& f) {
  if (m.type.kind == Kind::Nested) return read_struct(in, *m.nested, out, f);
  return read_scalar(in, m.type, out, f);
}

bool read_member(Reader& in, const Compiled::Member& m, nlohmann::ordered_json& out, Failure& f) {
  const FieldType& t = m.type;
  if (t.container == Container::None) return read_element(in, m, out, f);
  const bool complex = t.kind == Kind::Nested || t.kind == Kind::String;
  if (in.xcdr2() && complex) {
    std::uint32_t dheader = 0;
    if (!in.read(dheader, f)) return false;
    if (dheader > in.remaining()) return in.short_by(dheader - in.remaining(), f);
  }
  std::uint32_t count = t.size;
  if (t.container != Container::Array) {
    if (!in.read(count, f)) return false;
    if (t.container == Container::BoundedSequence && count > t.size) {
      f.why = std::to_string(count) + " elements, over the bound " + std::to_string(t.size);
      return false;
    }
  }
  const std::size_t element = std::max<std::size_t>(size_of(t.kind), 1);
  // Each element takes at least a byte (a string its length's 4): a count past what remains is
  // malformed, and is said before anything is allocated for it.
  const std::size_t least = t.kind == Kind::String ? 4 : element;
  if (count > in.remaining() / least) return in.short_by(std::size_t{count} * least - in.remaining(), f);
  if (bytes_kind(t.kind)) {
    const std::uint8_t* at = nullptr;
    if (!in.take(count, at, f)) return false;
    out = nlohmann::ordered_json::binary(std::vector<std::uint8_t>(at, at + count));
    return true;
  }
  out = nlohmann::ordered_json::array();
  auto& items = out.get_ref<nlohmann::ordered_json::array_t&>();
  items.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    nlohmann::ordered_json item;
    if (!read_element(in, m, item, f)) {
      f.index(i);
      return false;
    }
    items.push_back(std::move(item));
  }
  return true;
}

bool read_struct(Reader& in, const Compiled::Type& type, nlohmann::ordered_json& out, Failure& f) {
  out = nlohmann::ordered_json::object();
  if (type.members.empty()) {
    // rosidl's placeholder member of an empty message: one byte on the wire.
    std::uint8_t placeholder = 0;
    return in.read(placeholder, f);
  }
  for (const auto& m : type.members) {
    nlohmann::ordered_json value;
    if (!read_member(in, m, value, f)) {
      f.enter(m.name);
      return false;
    }
    out.emplace(m.name, std::move(value));
  }
  return true;
}

// ---- writing ----

class Writer {
 public:
  Writer(bool little, bool xcdr2) : little_(little), max_align_(xcdr2 ? 4 : 8), xcdr2_(xcdr2) {}
  bool xcdr2() const { return xcdr2_; }
  void align(std::size_t n) {
    n = std::min(n, max_align_);
    while ((body_.size()) % n) body_.push_back(0);
  }
  template <typename T>
  void put(T v) {
    align(sizeof(T));
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (little_ != (std::endian::native == std::endian::little)) {
      for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    }
    body_.insert(body_.end(), b, b + sizeof(T));
  }
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    body_.insert(body_.end(), p, p + n);
  }
  std::size_t size() const { return body_.size(); }
  /// Writes `v` at `at` (a placeholder put() earlier), for XCDR2's sizes known after the fact.
  void patch(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) body_[at + i] = static_cast<std::uint8_t>(little_ ? v >> (8 * i) : v >> (8 * (3 - i)));
  }
  std::vector<std::uint8_t>& body() { return body_; }

 private:
  std::vector<std::uint8_t> body_;
  bool little_;
  std::size_t max_align_;
  bool xcdr2_;
};

template <typename T>
bool integer(const nlohmann::json& v, T& out, Failure& f) {
  if (v.is_boolean()) {
    out = v.get<bool>() ? 1 : 0;
    return true;
  }
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        out = static_cast<T>(u);
        return true;
      }
    } else {
      const auto s = v.get<std::int64_t>();
      if (s >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
          (s < 0 || static_cast<std::uint64_t>(s) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
        out = static_cast<T>(s);
        return true;
      }
    }
    f.why = v.dump() + " is out of range";
    return false;
  }
  f.why = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " is not an integer";
  return false;
}

bool write_scalar(Writer& w, const FieldType& t, const nlohmann::json& v, Failure& f) {
  switch (t.kind) {
    case Kind::Bool:
      if (!v.is_boolean() && !v.is_number_integer()) { f.why = v.dump() + " is not a bool"; return false; }
      w.put<std::uint8_t>(v.is_boolean() ? v.get<bool>() : v.get<std::int64_t>() != 0);
      return true;
    case Kind::Byte: case Kind::Char: case Kind::UInt8: { std::uint8_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::Int8: { std::int8_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::Int16: { std::int16_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::UInt16: { std::uint16_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::Int32: { std::int32_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::UInt32: { std::uint32_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::Int64: { std::int64_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::UInt64: { std::uint64_t x; if (!integer(v, x, f)) return false; w.put(x); return true; }
    case Kind::Float32: case Kind::Float64:
      if (!v.is_number()) { f.why = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " is not a number"; return false; }
      if (t.kind == Kind::Float32) w.put(v.get<float>()); else w.put(v.get<double>());
      return true;
    case Kind::String: {
      if (!v.is_string()) { f.why = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " is not a string"; return false; }
      const auto& s = v.get_ref<const std::string&>();
      if (t.string_bound && s.size() > t.string_bound) {
        f.why = "a string of " + std::to_string(s.size()) + " bytes, over its bound " + std::to_string(t.string_bound);
        return false;
      }
      w.put(static_cast<std::uint32_t>(s.size() + 1));
      w.bytes(s.data(), s.size());
      w.bytes("", 1);
      return true;
    }
    default:
      f.why = "unwritable type";
      return false;
  }
}

bool write_struct(Writer& w, const Compiled::Type& type, const nlohmann::json& v, Failure& f);

bool write_element(Writer& w, const Compiled::Member& m, const nlohmann::json& v, Failure& f) {
  if (m.type.kind == Kind::Nested) return write_struct(w, *m.nested, v, f);
  return write_scalar(w, m.type, v, f);
}

/// The zero of a member: what a field left out takes when the .msg gives no default.
nlohmann::json zero(const Compiled::Member& m) {
  if (m.type.container == Container::Array) {
    nlohmann::json items = nlohmann::json::array();
    Compiled::Member one = m;
    one.type.container = Container::None;
    for (std::uint32_t i = 0; i < m.type.size; ++i) items.push_back(zero(one));
    return items;
  }
  if (m.type.container != Container::None) return nlohmann::json::array();
  switch (m.type.kind) {
    case Kind::Bool: return false;
    case Kind::String: return "";
    case Kind::Nested: return nlohmann::json::object();
    case Kind::Float32: case Kind::Float64: return 0.0;
    default: return 0;
  }
}

bool write_member(Writer& w, const Compiled::Member& m, const nlohmann::json& v, Failure& f) {
  const FieldType& t = m.type;
  if (t.container == Container::None) return write_element(w, m, v, f);
  std::vector<std::uint8_t> binary;
  const nlohmann::json* items = &v;
  if (v.is_binary()) {
    binary = v.get_binary();
  } else if (!v.is_array()) {
    f.why = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " is not an array";
    return false;
  }
  const std::size_t count = v.is_binary() ? binary.size() : items->size();
  if ((t.container == Container::Array && count != t.size) ||
      (t.container == Container::BoundedSequence && count > t.size)) {
    f.why = std::to_string(count) + " elements for " + t.spelled();
    return false;
  }
  const bool complex = t.kind == Kind::Nested || t.kind == Kind::String;
  std::size_t dheader_at = 0;
  if (w.xcdr2() && complex) {
    w.put<std::uint32_t>(0);
    dheader_at = w.size() - 4;
  }
  if (t.container != Container::Array) w.put(static_cast<std::uint32_t>(count));
  if (v.is_binary()) {
    if (!bytes_kind(t.kind)) {
      f.why = "bytes given for " + t.spelled();
      return false;
    }
    w.bytes(binary.data(), binary.size());
  } else {
    Compiled::Member one = m;
    one.type.container = Container::None;
    for (std::size_t i = 0; i < count; ++i) {
      if (!write_element(w, one, (*items)[i], f)) {
        f.index(i);
        return false;
      }
    }
  }
  if (w.xcdr2() && complex) w.patch(dheader_at, static_cast<std::uint32_t>(w.size() - dheader_at - 4));
  return true;
}

bool write_struct(Writer& w, const Compiled::Type& type, const nlohmann::json& given, Failure& f) {
  // null is an object with every field left out.
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& v = given.is_null() ? kEmpty : given;
  if (!v.is_object()) {
    f.why = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " is not an object (" + type.name + ")";
    return false;
  }
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (const auto& m : type.members) known = known || m.name == key;
    if (!known) {
      f.why = "no field '" + key + "' in " + type.name;
      return false;
    }
  }
  if (type.members.empty()) {
    w.put<std::uint8_t>(0);
    return true;
  }
  for (const auto& m : type.members) {
    auto it = v.find(m.name);
    const nlohmann::json fallback = it != v.end() ? nlohmann::json() : !m.default_value.is_null() ? m.default_value : zero(m);
    if (!write_member(w, m, it != v.end() ? *it : fallback, f)) {
      f.enter(m.name);
      return false;
    }
  }
  return true;
}

}  // namespace

Result<Encapsulation> read_encapsulation(std::span<const std::byte> message) {
  if (message.size() < 4) {
    return Status(ErrorCode::InvalidArgument, "a CDR message of " + std::to_string(message.size()) +
                                                  " bytes has no 4-byte encapsulation header");
  }
  if (message[0] == std::byte{0}) {
    switch (static_cast<unsigned>(message[1])) {
      case 0x00: return Encapsulation::Xcdr1Be;
      case 0x01: return Encapsulation::Xcdr1Le;
      case 0x06: return Encapsulation::Xcdr2Be;
      case 0x07: return Encapsulation::Xcdr2Le;
      default: break;
    }
  }
  return Status(ErrorCode::InvalidArgument, "CDR encapsulation header " + hex_header(message) +
                                                " is not plain CDR (00 00, 00 01: XCDR1; 00 06, 00 07: XCDR2)");
}

Status check_ros2_wire(std::span<const std::byte> message) {
  auto e = read_encapsulation(message);
  if (!e) return e.status();
  if (*e == Encapsulation::Xcdr1Le) return {};
  const char* what = *e == Encapsulation::Xcdr1Be ? "XCDR1 big-endian" : *e == Encapsulation::Xcdr2Le ? "XCDR2 little-endian" : "XCDR2 big-endian";
  return Status(ErrorCode::InvalidArgument, "CDR header " + hex_header(message) + " is " + what +
                                                "; ROS 2 nodes read XCDR1 little-endian (00 01 00 00)");
}

Result<CdrCodec> CdrCodec::create(const MessageSet& set) {
  auto compiled = std::make_shared<Compiled>();
  for (const auto& [name, definition] : set.types) {
    auto& type = compiled->types[name];
    type.name = name;
    for (const auto& field : definition.fields) {
      if (field.type.kind == Kind::WString) {
        return Status(ErrorCode::InvalidArgument, name + " field '" + field.name +
                                                      "': wstring is not supported (its wire form differs between "
                                                      "middlewares); use string");
      }
      type.members.push_back({field.name, field.type, nullptr, field.default_value});
    }
  }
  for (auto& [name, type] : compiled->types) {
    for (auto& m : type.members) {
      if (m.type.kind != Kind::Nested) continue;
      auto it = compiled->types.find(m.type.nested);
      if (it == compiled->types.end()) {
        return Status(ErrorCode::InvalidArgument, name + " field '" + m.name + "': type " + m.type.nested + " is not defined");
      }
      m.nested = &it->second;
    }
  }
  // A type that contains itself has no finite wire form.
  std::set<const Compiled::Type*> done;
  std::function<bool(const Compiled::Type*, std::set<const Compiled::Type*>&)> acyclic =
      [&](const Compiled::Type* t, std::set<const Compiled::Type*>& open) {
        if (done.count(t)) return true;
        if (!open.insert(t).second) return false;
        for (const auto& m : t->members) {
          if (m.nested && !acyclic(m.nested, open)) return false;
        }
        open.erase(t);
        done.insert(t);
        return true;
      };
  for (const auto& [name, type] : compiled->types) {
    std::set<const Compiled::Type*> open;
    if (!acyclic(&type, open)) return Status(ErrorCode::InvalidArgument, "type " + name + " contains itself");
  }
  compiled->root = &compiled->types.at(set.root);
  return CdrCodec(std::move(compiled));
}

const std::string& CdrCodec::type_name() const noexcept { return compiled_->root->name; }

Result<nlohmann::ordered_json> CdrCodec::decode(std::span<const std::byte> message) const {
  auto e = read_encapsulation(message);
  if (!e) return e.status();
  const bool little = *e == Encapsulation::Xcdr1Le || *e == Encapsulation::Xcdr2Le;
  const bool xcdr2 = *e == Encapsulation::Xcdr2Le || *e == Encapsulation::Xcdr2Be;
  Reader in(message.subspan(4), little, xcdr2);
  nlohmann::ordered_json out;
  Failure f;
  if (!read_struct(in, *compiled_->root, out, f)) return f.status(compiled_->root->name);
  // A writer may pad the end to a multiple of 4; more is not this type's message.
  if (in.remaining() > 3) {
    f.why = std::to_string(in.remaining()) + " bytes after its last field: the message is not of this type";
    return f.status(compiled_->root->name);
  }
  return out;
}

Result<std::vector<std::byte>> CdrCodec::encode(const nlohmann::json& value, Encapsulation encapsulation) const {
  const bool little = encapsulation == Encapsulation::Xcdr1Le || encapsulation == Encapsulation::Xcdr2Le;
  const bool xcdr2 = encapsulation == Encapsulation::Xcdr2Le || encapsulation == Encapsulation::Xcdr2Be;
  Writer w(little, xcdr2);
  Failure f;
  if (!write_struct(w, *compiled_->root, value, f)) return f.status(compiled_->root->name);
  const std::uint8_t kinds[] = {0x01, 0x00, 0x07, 0x06};
  std::vector<std::byte> out(4 + w.size());
  out[1] = static_cast<std::byte>(kinds[static_cast<int>(encapsulation)]);
  if (w.size()) std::memcpy(out.data() + 4, w.body().data(), w.size());
  return out;
}

}  // namespace cerulion::ros2
