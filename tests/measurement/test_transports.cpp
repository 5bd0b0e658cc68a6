// SPDX-License-Identifier: Apache-2.0
// The peer transports (Fast DDS, iceoryx): short real round trips in one process and in two, and
// RouDi started and stopped without leaving a process, a socket or shared memory behind. A
// transport this build or machine lacks is skipped with a WARN saying why.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <signal.h>
#include <unistd.h>

#include "cerulion/measurement/ping.hpp"
#include "cerulion/measurement/responder.hpp"
#include "cerulion/measurement/transport.hpp"
#include "process.hpp"
// The RouDi helper is the library's own (not installed); the test reaches it by path.
#include "../../measurement/src/transport_iceoryx.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using namespace std::chrono_literals;
using cerulion::test::unique_domain;

namespace {

constexpr const char* kResponderTest = "transport responder process (started by the tests below)";

std::optional<TransportInfo> find_transport(const std::string& name) {
  for (auto& t : transports()) {
    if (t.name == name) return t;
  }
  return std::nullopt;
}

/// Why `name` cannot run here, empty when it can.
std::string unavailable(const std::string& name) {
  auto t = find_transport(name);
  if (!t) return "not listed by transports()";
  if (!t->available) return t->reason;
  if (name == "iceoryx") return iceoryx::unavailable_reason();
  return {};
}

/// The responder as a process of its own: this test binary, running only the hidden test case
/// below, told what to serve through its environment.
Result<ChildProcess> spawn_responder(const PingOptions& o) {
  ChildOptions child;
  child.argv = {"measurement_tests", kResponderTest};
  child.program = kThisProgram;
  child.environment = {"CERULION_TEST_RESPONDER_TRANSPORT=" + o.transport, "CERULION_TEST_RESPONDER_DOMAIN=" + o.domain,
                       "CERULION_TEST_RESPONDER_PREFIX=" + o.prefix,
                       "CERULION_TEST_RESPONDER_SIZE=" + std::to_string(o.size),
                       std::string("CERULION_TEST_RESPONDER_SPIN=") + (o.wait == WaitStrategy::Spin ? "1" : "0")};
  child.out = Stream::Null;  // Catch2's summary; errors still reach stderr
  child.parent_death_signal = SIGKILL;
  return ChildProcess::start(child);
}

PingOptions options(const std::string& transport, const std::string& stem, Layout layout, std::uint64_t size,
                    std::uint64_t count) {
  PingOptions o;
  o.transport = transport;
  o.domain = unique_domain(stem);
  o.layout = layout;
  o.size = size;
  o.count = count;
  o.warmup = 2;
  o.rate_hz = 200;
  o.timeout = 5s;
  o.start_responder_process = spawn_responder;
  return o;
}

/// 20 round trips at 64 B and 2 at 1 MiB, every one answered.
void round_trips(const std::string& transport, Layout layout, WaitStrategy wait = WaitStrategy::Adaptive) {
  for (auto [size, count] : {std::pair<std::uint64_t, std::uint64_t>{64, 20}, {1u << 20, 2}}) {
    INFO(transport << ", " << to_string(layout) << ", " << size << " B, " << to_string(wait) << " wait");
    PingOptions o = options(transport, "tr_" + transport, layout, size, count);
    o.wait = wait;
    auto r = run_ping(o);
    REQUIRE(r.ok());
    CHECK(r->samples_ns.size() == count);
    CHECK(r->lost == 0);
    CHECK_FALSE(r->responder_gone);
    CHECK(r->responder_error.empty());
    for (auto s : r->samples_ns) CHECK((s > 0 && s < 5'000'000'000ull));
  }
}

/// Processes of ours whose executable is iox-roudi.
int roudi_children() {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ignored;
    auto exe = std::filesystem::read_symlink(entry.path() / "exe", ignored);
    if (exe.filename() != "iox-roudi") continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // Field 4, after the parenthesised name, is the parent pid.
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid()) ++n;
  }
  return n;
}

void check_roudi_gone() {
  CHECK_FALSE(iceoryx::roudi_running());
  CHECK(roudi_children() == 0);
  CHECK_FALSE(std::filesystem::exists("/dev/shm/iceoryx_mgmt"));
  CHECK_FALSE(std::filesystem::exists("/tmp/roudi"));
}

}  // namespace

TEST_CASE(kResponderTest, "[.transport-responder]") {
  const char* transport = std::getenv("CERULION_TEST_RESPONDER_TRANSPORT");
  if (!transport) return;  // run by hand: nothing to serve
  ResponderRunOptions ro;
  ro.transport = transport;
  ro.transport_options.domain = std::getenv("CERULION_TEST_RESPONDER_DOMAIN");
  ro.transport_options.prefix = std::getenv("CERULION_TEST_RESPONDER_PREFIX");
  ro.transport_options.max_payload = std::strtoull(std::getenv("CERULION_TEST_RESPONDER_SIZE"), nullptr, 10);
  ro.transport_options.stop_on_request = true;
  if (const char* spin = std::getenv("CERULION_TEST_RESPONDER_SPIN"); spin && std::string(spin) == "1") {
    ro.transport_options.wait = WaitStrategy::Spin;
  }
  Status served = run_responder(ro);
  INFO(served.message());
  REQUIRE(served.ok());
}

TEST_CASE("Fast DDS and iceoryx are listed as available or with the reason they are not", "[measurement][transports]") {
  for (const char* name : {"fastdds", "iceoryx"}) {
    auto t = find_transport(name);
    REQUIRE(t);
    CHECK(t->available == t->reason.empty());
    CHECK(t->reason.find("--") == std::string::npos);
  }
  auto bad = create_requester("no-such-transport", RequesterOptions{});
  CHECK(bad.code() == ErrorCode::NotFound);
}

TEST_CASE("Fast DDS carries round trips in one process and between two", "[measurement][transports][fastdds]") {
  if (std::string why = unavailable("fastdds"); !why.empty()) {
    WARN("Fast DDS skipped: " << why);
    return;
  }
  round_trips("fastdds", Layout::SingleProcess);
  round_trips("fastdds", Layout::MultiProcess);
}

// One test case for everything that starts RouDi: there is one RouDi per machine, and a RouDi
// stopping terminates whoever is attached to it, so these must not run side by side.
TEST_CASE("iceoryx carries round trips over a RouDi it starts and stops it after", "[measurement][transports][iceoryx]") {
  if (std::string why = unavailable("iceoryx"); !why.empty()) {
    WARN("iceoryx skipped: " << why);
    return;
  }
  if (iceoryx::roudi_running()) {
    WARN("iceoryx skipped: a RouDi not started by this test is running on this machine");
    return;
  }

  SECTION("a RouDi started by the requester for each measurement") {
    round_trips("iceoryx", Layout::SingleProcess);
    check_roudi_gone();
    round_trips("iceoryx", Layout::MultiProcess);
    check_roudi_gone();
  }

  SECTION("both sides busy-polling (the spin wait), as iceoryx's own benchmark waits") {
    round_trips("iceoryx", Layout::SingleProcess, WaitStrategy::Spin);
    round_trips("iceoryx", Layout::MultiProcess, WaitStrategy::Spin);
    check_roudi_gone();
  }

  SECTION("one RouDi started for several measurements; a payload over its pools is refused") {
    auto roudi = iceoryx::Roudi::start(1u << 20);
    REQUIRE(roudi.ok());
    CHECK(roudi->running());
    CHECK(iceoryx::roudi_running());
    CHECK(roudi_children() == 1);
    CHECK(iceoryx::running_roudi_max_payload() == std::optional<std::uint64_t>(1u << 20));
    // The config holds the largest payload.
    CHECK(iceoryx::roudi_config(1u << 20).find("size = 1048576") != std::string::npos);

    auto again = iceoryx::Roudi::start(64);
    CHECK(again.code() == ErrorCode::Incompatible);

    for (int i = 0; i < 2; ++i) {  // the process attaches and detaches each time
      auto r = run_ping(options("iceoryx", "tr_iox_shared", Layout::MultiProcess, 1u << 20, 3));
      REQUIRE(r.ok());
      CHECK(r->samples_ns.size() == 3);
      CHECK(iceoryx::roudi_running());
    }
    auto big = run_ping(options("iceoryx", "tr_iox_big", Layout::SingleProcess, 2u << 20, 1));
    REQUIRE_FALSE(big.ok());
    CHECK(big.code() == ErrorCode::PayloadTooLarge);  // refused up front: iceoryx aborts on such a loan
    CHECK(big.message().find("--") == std::string::npos);

    CHECK(roudi->stop().ok());
    CHECK_FALSE(roudi->running());
    CHECK(roudi->stop().ok());  // idempotent
    check_roudi_gone();
  }
}

TEST_CASE("The RouDi config sizes its largest pool for the payload", "[measurement][transports]") {
  const std::string small = iceoryx::roudi_config(64);
  CHECK(small.find("size = 1024") != std::string::npos);
  CHECK(small.find("size = 65536") == std::string::npos);
  const std::string big = iceoryx::roudi_config(16u << 20);
  for (const char* pool : {"size = 1024", "size = 65536", "size = 1048576", "size = 16777216"}) {
    CHECK(big.find(pool) != std::string::npos);
  }
  CHECK(iceoryx::roudi_config(1000001).find("size = 1000008") != std::string::npos);  // a multiple of 8
}
