// SPDX-License-Identifier: Apache-2.0
// What `cerulion bridge` says of itself: its first line names what it bridges, a bare topic name
// that is not near a subcommand's is still a topic, and `bridge status --json` with no bridge
// running is still an object.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

TEST_CASE("The bridge's first line names the topics, patterns, direction and both domains", "[bridge][cli]") {
  const std::string domain = unique_domain("start_line");
  const std::string dds = std::to_string(test_dds_domain());
  auto named = run_cerulion({"--domain", domain, "bridge", "/stat", "imu", "-e", "^/robot/", "-x", "debug$", "--export",
                             "--dds-domain", dds, "--duration", "0.2"},
                            {}, std::chrono::seconds(60));
  INFO(named.err);
  CHECK(named.exit_code == 0);
  CHECK(first_line(named.err) == "bridging /stat, /imu, topics matching '^/robot/' except those matching 'debug$' of domain '" +
                                     domain + "' out to DDS domain " + dds + " (reliable, keep last 10); Ctrl-C stops");

  auto all = run_cerulion({"--domain", domain, "bridge", "-a", "--import", "--best-effort", "--depth", "3",
                           "--dds-domain", dds, "--duration", "0.2"},
                          {}, std::chrono::seconds(60));
  INFO(all.err);
  CHECK(all.exit_code == 0);
  CHECK(first_line(all.err) == "bridging every topic (new ones too) of domain '" + domain + "' in from DDS domain " + dds +
                                   " (best effort, keep last 3); Ctrl-C stops");
}

TEST_CASE("A bare word far from every bridge subcommand is bridged as a topic", "[bridge][cli]") {
  const std::string domain = unique_domain("bare_topic");
  const std::string dds = std::to_string(test_dds_domain());
  auto bare = run_cerulion({"--domain", domain, "bridge", "imu", "--dds-domain", dds, "--duration", "0.2"}, {},
                           std::chrono::seconds(60));
  INFO(bare.err);
  CHECK(bare.exit_code == 0);
  CHECK(first_line(bare.err).rfind("bridging /imu of domain '" + domain + "' both ways with DDS domain " + dds, 0) == 0);
}

TEST_CASE("Bridge status --json with no bridge running prints an object with no bridges and exits one",
          "[bridge][cli][json]") {
  const std::string domain = unique_domain("no_bridge");
  auto r = run_cerulion({"--domain", domain, "bridge", "status", "--json"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "cerulion: no bridge is running in domain '" + domain + "'\n");
  REQUIRE(!r.out.empty());
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK(nlohmann::json::parse(r.out) ==
        nlohmann::json{{"domain", domain}, {"bridges", nlohmann::json::array()}, {"problems", nlohmann::json::array()}});
}
