// SPDX-License-Identifier: Apache-2.0
#include "arguments.hpp"

#include <cmath>

namespace cerulion::python {
namespace {

[[noreturn]] void bad_argument(const char* option, const std::string& why) {
  raise(Status(ErrorCode::InvalidArgument, std::string(option) + ": " + why, Subject::option(option)));
}

std::string text_of(py::handle value, const char* option, const char* expected) {
  if (!py::isinstance<py::str>(value)) {
    bad_argument(option, std::string("expected ") + expected + ", not " + std::string(py::str(py::type::of(value).attr("__name__"))));
  }
  return value.cast<std::string>();
}

std::string bytes_or_text(py::handle value, const char* option) {
  if (py::isinstance<py::bytes>(value)) return value.cast<std::string>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  bad_argument(option, "expected str or bytes");
}

}  // namespace

std::optional<Mode> mode_argument(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<Mode>(value)) return value.cast<Mode>();
  const std::string text = text_of(value, "mode", "cerulion.Mode or 'lockstep' / 'free-run'");
  if (auto mode = parse_mode(text)) return mode;
  bad_argument("mode", "'" + text + "' is not a mode (lockstep, free-run)");
}

WaitStrategy wait_argument(py::handle value) {
  if (py::isinstance<WaitStrategy>(value)) return value.cast<WaitStrategy>();
  const std::string text = text_of(value, "wait", "cerulion.WaitStrategy or 'adaptive' / 'spin' / 'block'");
  if (auto wait = parse_wait(text)) return *wait;
  bad_argument("wait", "'" + text + "' is not a wait strategy (adaptive, spin, block)");
}

StartAt start_argument(py::handle value) {
  if (py::isinstance<StartAt>(value)) return value.cast<StartAt>();
  const std::string text = text_of(value, "start", "cerulion.StartAt or 'next' / 'first'");
  if (text == "next") return StartAt::Next;
  if (text == "first") return StartAt::First;
  bad_argument("start", "'" + text + "' is not a start (next, first)");
}

std::optional<std::uint32_t> depth_argument(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) bad_argument("depth", "expected an int");
  // Core says what depths a topic takes, in its words ("depth must be 1..4096"); what an unsigned
  // 32-bit number cannot carry is given to it as 0, which it refuses the same way.
  const auto number = py::reinterpret_borrow<py::int_>(value);
  if (number < py::int_(0) || number > py::int_(UINT32_MAX)) return 0;
  return number.cast<std::uint32_t>();
}

Timeout timeout_argument(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (!(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) || py::isinstance<py::bool_>(value)) {
    bad_argument("timeout", "expected seconds (a number) or None");
  }
  const double seconds = value.cast<double>();
  if (!(seconds >= 0) || !std::isfinite(seconds)) bad_argument("timeout", "expected seconds ≥ 0 or None");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(std::min(seconds, 1e9) * 1e9)));
}

std::string domain_argument(py::handle value) {
  if (value.is_none()) return default_domain();
  return text_of(value, "domain", "str or None");
}

std::optional<TopicType> type_argument(py::handle encoding, py::handle schema) {
  if (encoding.is_none() && schema.is_none()) return std::nullopt;
  TopicType type;
  if (!encoding.is_none()) type.message_encoding = text_of(encoding, "encoding", "str");
  if (py::isinstance<Schema>(schema)) {
    type.schema = schema.cast<Schema>();
  } else if (py::isinstance<py::tuple>(schema) && py::len(schema) == 3) {
    py::tuple parts = py::reinterpret_borrow<py::tuple>(schema);
    type.schema = Schema{text_of(parts[0], "schema", "(name, encoding, data)"),
                         text_of(parts[1], "schema", "(name, encoding, data)"), bytes_or_text(parts[2], "schema")};
  } else if (!schema.is_none()) {
    bad_argument("schema", "expected cerulion.Schema, a (name, encoding, data) tuple or None");
  }
  return type;
}

void register_arguments(py::module_& m) {
  py::enum_<Mode>(m, "Mode", "How a topic treats a subscriber slower than its publishers (as cerulion::Mode).")
      .value("Lockstep", Mode::Lockstep, "No slot is reused before every subscriber released it; publishers wait.")
      .value("FreeRun", Mode::FreeRun, "Publishers never wait; a slow subscriber loses the oldest messages.");
  py::enum_<WaitStrategy>(m, "WaitStrategy", "How a participant waits (as cerulion::WaitStrategy).")
      .value("Adaptive", WaitStrategy::Adaptive, "Learns the arrival period; near-spin latency at a few % CPU.")
      .value("Spin", WaitStrategy::Spin, "Busy-polls: lowest latency, one full core.")
      .value("Block", WaitStrategy::Block, "Blocks in the kernel: no CPU.");
  py::enum_<StartAt>(m, "StartAt", "Where a new subscriber starts reading (as cerulion::StartAt).")
      .value("Next", StartAt::Next, "The first message published after it joined (the default).")
      .value("First", StartAt::First, "The oldest message the topic's ring still holds.");
  py::enum_<Role>(m, "Role", "What a participant is (as cerulion::Role).")
      .value("Publisher", Role::Publisher)
      .value("Subscriber", Role::Subscriber, "Counts for lockstep backpressure.")
      .value("Tap", Role::Tap, "Never holds a publisher back; counts what it misses.");

  py::class_<Schema>(m, "Schema", "A message schema, as an MCAP Schema record carries it.")
      .def(py::init([](std::string name, std::string encoding, py::handle data) {
             return Schema{std::move(name), std::move(encoding), bytes_or_text(data, "schema")};
           }),
           py::arg("name"), py::arg("encoding"), py::arg("data"),
           "name (e.g. 'robot.Imu'), encoding ('jsonschema', 'protobuf', 'ros2msg'...), data (str or bytes).")
      .def_readonly("name", &Schema::name)
      .def_readonly("encoding", &Schema::encoding)
      .def_property_readonly("data", [](const Schema& s) { return py::bytes(s.data); }, "The schema itself, as bytes.")
      .def("__eq__", [](const Schema& a, const Schema& b) { return a == b; })
      .def("__repr__", [](const Schema& s) { return "Schema('" + s.name + "', '" + s.encoding + "', " +
                                                     std::to_string(s.data.size()) + " bytes)"; });
  py::class_<TopicType>(m, "TopicType", "What a topic's messages are: an MCAP message encoding and a schema.")
      .def_readonly("encoding", &TopicType::message_encoding, "Message encoding ('json', 'protobuf'...); '' for raw bytes.")
      .def_property_readonly("schema", [](const TopicType& t) -> py::object {
        return t.schema.empty() ? py::none() : py::cast(t.schema);
      }, "The schema, or None.")
      .def_property_readonly("raw", &TopicType::raw, "True for raw bytes (no type declared).")
      .def("__repr__", [](const TopicType& t) { return "TopicType(" + describe(t) + ")"; });
}

}  // namespace cerulion::python
