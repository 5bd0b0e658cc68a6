// SPDX-License-Identifier: Apache-2.0
// One process attached to many topics (a publisher and a subscriber on each), and what it holds:
//   topic-scale [--topics N] [--payload BYTES] [--ceiling BYTES] [--json]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cerulion/bench/topic_scale.hpp"

namespace {

bool parse_count(const char* text, std::uint64_t& out) {
  char* end = nullptr;
  out = std::strtoull(text, &end, 10);
  return end != text && *end == '\0';
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  cerulion::bench::TopicScaleOptions options;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
      continue;
    }
    std::uint64_t value = 0;
    if (i + 1 >= argc || !parse_count(argv[i + 1], value)) {
      std::fprintf(stderr, "topic-scale: %s needs a whole number (see the usage in its source)\n", a.c_str());
      return 2;
    }
    ++i;
    if (a == "--topics") {
      options.topics = static_cast<std::uint32_t>(value);
    } else if (a == "--payload") {
      options.payload = value;
    } else if (a == "--ceiling") {
      options.max_payload = value;
    } else {
      std::fprintf(stderr, "topic-scale: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  auto report = cerulion::bench::measure_topic_scale(options);
  if (!report) {
    std::fprintf(stderr, "topic-scale: %s\n", report.message().c_str());
    return 1;
  }
  const auto& r = *report;
  if (json) {
    nlohmann::json j = {{"topics", r.topics},
                        {"attach_seconds", r.attach_seconds},
                        {"round_seconds", r.round_seconds},
                        {"address_space_bytes", {{"before", r.address_space_before}, {"after", r.address_space_after}}},
                        {"resident_bytes", {{"before", r.resident_before}, {"after", r.resident_after}}},
                        {"mappings", {{"before", r.mappings_before}, {"after", r.mappings_after}}},
                        {"descriptors", {{"before", r.descriptors_before}, {"after", r.descriptors_after}}},
                        {"shm_committed_bytes", r.shm_committed},
                        {"intact", r.intact}};
    std::printf("%s\n", j.dump(2).c_str());
    return r.intact == r.topics ? 0 : 1;
  }
  std::printf("%u topics, a publisher and a subscriber on each, one %llu B message each\n", r.topics,
              static_cast<unsigned long long>(options.payload));
  std::printf("  attach        %.2f s (%.0f us a topic)\n", r.attach_seconds, r.attach_seconds * 1e6 / r.topics);
  std::printf("  one message   %.3f s on every topic, %llu of %u intact\n", r.round_seconds,
              static_cast<unsigned long long>(r.intact), r.topics);
  std::printf("  address space %.0f MiB -> %.0f MiB (%.0f KiB a topic)\n", mib(r.address_space_before),
              mib(r.address_space_after), mib(r.address_space_after - r.address_space_before) * 1024 / r.topics);
  std::printf("  resident      %.0f MiB -> %.0f MiB\n", mib(r.resident_before), mib(r.resident_after));
  std::printf("  mappings      %llu -> %llu\n", static_cast<unsigned long long>(r.mappings_before),
              static_cast<unsigned long long>(r.mappings_after));
  std::printf("  descriptors   %llu -> %llu\n", static_cast<unsigned long long>(r.descriptors_before),
              static_cast<unsigned long long>(r.descriptors_after));
  std::printf("  /dev/shm      %.1f MiB committed\n", mib(r.shm_committed));
  return r.intact == r.topics ? 0 : 1;
}
