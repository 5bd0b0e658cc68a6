// SPDX-License-Identifier: Apache-2.0
#include "message_values.hpp"

#include <nlohmann/json.hpp>

#include "cerulion/ros2/decoded.hpp"

namespace cerulion::python {
namespace {

py::object to_python(const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::object: {
      py::dict out;
      for (const auto& [key, item] : v.items()) out[py::str(key)] = to_python(item);
      return out;
    }
    case nlohmann::ordered_json::value_t::array: {
      py::list out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_python(v[i]);
      return out;
    }
    case nlohmann::ordered_json::value_t::binary: {
      const auto& b = v.get_binary();
      return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
    }
    case nlohmann::ordered_json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      // A ROS 2 string is bytes on the wire: what is not UTF-8 is replaced, not refused.
      return py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
    }
    case nlohmann::ordered_json::value_t::boolean: return py::bool_(v.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return py::int_(v.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return py::int_(v.get<std::uint64_t>());
    case nlohmann::ordered_json::value_t::number_float: return py::float_(v.get<double>());
    default: return py::none();
  }
}

}  // namespace

py::object MessageValues::decode(std::string_view payload, const std::string& what) const {
  if (!ros2::decodable(type_)) {
    raise(Status(ErrorCode::InvalidArgument,
                 what + " carries " + describe(type_) + ": decode() reads ROS 2 messages (cdr with a ros2msg schema)"));
  }
  std::call_once(made_, [&] { codec_.emplace(ros2::codec_for(type_, ros2::MsgPath::from_environment())); });
  if (!*codec_) raise(Status(ErrorCode::InvalidArgument, what + ": " + codec_->message()));
  auto value = (*codec_)->decode({reinterpret_cast<const std::byte*>(payload.data()), payload.size()});
  if (!value) raise(Status(ErrorCode::InvalidArgument, what + ": " + value.message()));
  return to_python(*value);
}

py::object MessageValues::json(std::string_view payload, const std::string& what) const {
  if (ros2::decodable(type_)) return decode(payload, what);
  if (type_.message_encoding != "json") {
    raise(Status(ErrorCode::InvalidArgument, what + " carries " + describe(type_) + ", not json"));
  }
  auto value = nlohmann::ordered_json::parse(payload.begin(), payload.end(), nullptr, false);
  if (value.is_discarded()) {
    raise(Status(ErrorCode::InvalidArgument, what + " is not JSON: " + check_payload(type_, {reinterpret_cast<const std::byte*>(payload.data()), payload.size()}).message()));
  }
  return to_python(value);
}

}  // namespace cerulion::python
