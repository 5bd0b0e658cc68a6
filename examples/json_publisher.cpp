// SPDX-License-Identifier: Apache-2.0
// Publishes a battery's state on /battery as JSON at 10 Hz, declaring the topic's type: message
// encoding "json" and a JSON Schema. `cerulion echo /battery --json` prints the values, and a
// recording (`cerulion record /battery`) carries the schema, so Foxglove plots every field.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <cerulion/core/publisher.hpp>
#include <cerulion/core/stop.hpp>

#include "args.hpp"

constexpr const char* kBatterySchema = R"({
  "title": "Battery",
  "type": "object",
  "properties": {
    "index": {"type": "integer"},
    "voltage": {"type": "number", "description": "V"},
    "current": {"type": "number", "description": "A, negative while discharging"},
    "charge": {"type": "number", "minimum": 0, "maximum": 1}
  },
  "required": ["index", "voltage", "current", "charge"]
})";

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::PublisherOptions options;
  options.topic.type = cerulion::TopicType{"json", {"Battery", "jsonschema", kBatterySchema}};
  options.wait.cancel = cerulion::stop_on_signals();
  auto pub = cerulion::Publisher::create("/battery", options);
  if (!pub) {
    std::fprintf(stderr, "json_publisher: %s\n", pub.message().c_str());
    return 1;
  }

  for (std::uint64_t n = 0; !args.finished(n) && !cerulion::stop_requested(); ++n) {
    const double charge = 0.9 - 0.001 * static_cast<double>(n);
    char json[160];
    const int size = std::snprintf(json, sizeof json, R"({"index":%llu,"voltage":%.3f,"current":%.3f,"charge":%.3f})",
                                   static_cast<unsigned long long>(n), 22.2 + 2.0 * charge,
                                   -3.0 - std::sin(static_cast<double>(n) / 10.0), charge);
    if (auto sent = pub->publish_text(std::string_view(json, static_cast<std::size_t>(size))); !sent) {
      if (sent.code() == cerulion::ErrorCode::Interrupted) break;
      std::fprintf(stderr, "json_publisher: %s\n", sent.message().c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}
