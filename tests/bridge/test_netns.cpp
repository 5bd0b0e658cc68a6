// SPDX-License-Identifier: Apache-2.0
// Two network namespaces joined by a veth pair stand for two machines with a network between them:
// each runs a bridge over UDP only, and a topic crosses byte-exact at 64 B, 1 MiB and 16 MiB.
// Skipped, saying so, where the test cannot create namespaces (not root, no `ip`).

#include <catch2/catch.hpp>

#include <unistd.h>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

bool ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, {}, std::chrono::seconds(10)).exit_code == 0;
}

/// Namespaces ns_a and ns_b, joined by veth_a (10.x.y.1) and veth_b (10.x.y.2); removed at the end.
struct TwoHosts {
  std::string ns_a, ns_b;
  bool ready = false;
  TwoHosts() {
    const std::string id = std::to_string(::getpid());
    ns_a = "cerulion_a_" + id;
    ns_b = "cerulion_b_" + id;
    const std::string veth_a = "cva" + id, veth_b = "cvb" + id;
    const std::string net = "10.213." + std::to_string(::getpid() % 250) + ".";
    if (!ip({"netns", "add", ns_a})) return;
    if (!ip({"netns", "add", ns_b})) return;
    ready = ip({"link", "add", veth_a, "netns", ns_a, "type", "veth", "peer", "name", veth_b, "netns", ns_b}) &&
            ip({"-n", ns_a, "addr", "add", net + "1/24", "dev", veth_a}) &&
            ip({"-n", ns_b, "addr", "add", net + "2/24", "dev", veth_b}) &&
            ip({"-n", ns_a, "link", "set", veth_a, "up"}) && ip({"-n", ns_b, "link", "set", veth_b, "up"}) &&
            ip({"-n", ns_a, "link", "set", "lo", "up"}) && ip({"-n", ns_b, "link", "set", "lo", "up"}) &&
            // discovery is multicast (239.255.0.1): route it over the veth
            ip({"-n", ns_a, "route", "add", "224.0.0.0/4", "dev", veth_a}) &&
            ip({"-n", ns_b, "route", "add", "224.0.0.0/4", "dev", veth_b});
  }
  ~TwoHosts() {
    (void)ip({"netns", "del", ns_a});  // takes the veth pair with it
    (void)ip({"netns", "del", ns_b});
  }
};

}  // namespace

TEST_CASE("Bridges in two network namespaces carry a topic over UDP byte-exact", "[bridge][netns]") {
  TwoHosts hosts;
  if (!hosts.ready) {
    WARN("skipped: cannot create network namespaces and a veth pair here (needs root and iproute2)");
    return;
  }
  const std::string a = unique_domain("nsa"), b = unique_domain("nsb"), topic = unique_topic("netns");
  const std::string dds = std::to_string(test_dds_domain());
  BackgroundProcess out({"ip", "netns", "exec", hosts.ns_a, cerulion_binary(), "--domain", a, "bridge", topic,
                         "--export", "--no-shared-memory", "--dds-domain", dds});
  BackgroundProcess in({"ip", "netns", "exec", hosts.ns_b, cerulion_binary(), "--domain", b, "bridge", topic,
                        "--import", "--no-shared-memory", "--dds-domain", dds});
  auto [pub, sub] = open_crossing(a, b, topic);
  std::uint64_t index = 0;
  for (std::size_t size : {std::size_t{64}, std::size_t{1} << 20, std::size_t{16} << 20}) {
    INFO("size " << size);
    const auto sent = numbered(index, size);
    REQUIRE(pub->publish_copy(sent).ok());
    auto got = receive_numbered(*sub, std::chrono::seconds(30));
    REQUIRE(got.ok());
    REQUIRE(got->size() == size);
    CHECK(index_of(got->data()) == index);
    CHECK(std::memcmp(got->data().data(), sent.data(), size) == 0);
    ++index;
  }
}
