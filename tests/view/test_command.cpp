// SPDX-License-Identifier: Apache-2.0
// `cerulion view` as a command: usage errors, an address it cannot use, the warning off loopback,
// its stop on a signal, --readers, and `view status`.

#include <csignal>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>

#include "view_helpers.hpp"

using namespace viewtest;

TEST_CASE("view: a bad pattern is a usage error naming it", "[view][command]") {
  const auto r = test::run_cerulion({"view", "-e", "("});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--regex pattern '('") != std::string::npos);
}

TEST_CASE("view: an address that is none is a usage error, a port in use one line and exit 1", "[view][command]") {
  auto r = test::run_cerulion({"--domain", test::unique_domain("viewcmd"), "view", "--address", "nope"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "cerulion: view: 'nope' is not an IP address\n");
  LiveServer live;  // holds a port
  r = test::run_cerulion({"--domain", test::unique_domain("viewcmd"), "view", "--port", std::to_string(live.port())});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(live.port())) != std::string::npos);
}

TEST_CASE("view: a port another view server holds names that server and suggests --port 0", "[view][command]") {
  LiveServer live;
  const auto r = test::run_cerulion({"--domain", test::unique_domain("viewcmd"), "view", "--port", std::to_string(live.port())});
  CHECK(r.exit_code == 1);
  CHECK(r.err == fmt::format("cerulion: view: cannot listen on 127.0.0.1:{0}: the port is in use by view server {1} of "
                             "domain '{2}' (ws://127.0.0.1:{0}); --port 0 takes a free one\n",
                             live.port(), ::getpid(), live.domain));
}

TEST_CASE("view: a port below 1024 without privileges says it needs them", "[view][command]") {
  std::vector<std::string> argv{test::cerulion_binary(), "--domain", test::unique_domain("viewcmd"), "view", "--port",
                                "1", "--duration", "0.5"};
  // Root binds any port: the command runs as nobody, without capabilities.
  if (::geteuid() == 0) argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  const auto r = test::run_process(argv);
  if (r.exit_code == 0) {
    WARN("this machine lets anyone bind port 1 (net.ipv4.ip_unprivileged_port_start): nothing to check");
    return;
  }
  CHECK(r.exit_code == 1);
  CHECK(r.err == "cerulion: view: cannot listen on 127.0.0.1:1: ports below 1024 need privileges (root, or "
                 "CAP_NET_BIND_SERVICE); --port 0 takes a free one\n");
}

TEST_CASE("view: a topic nothing was ever published on is warned of, as echo does", "[view][command]") {
  const auto r = test::run_cerulion(
      {"--domain", test::unique_domain("viewcmd"), "view", "/nonexistent", "--port", "0", "--duration", "0.5"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("cerulion: warning: topic '/nonexistent' does not exist yet; view waits for it to be published "
                   "(Ctrl-C stops)\n") != std::string::npos);
}

TEST_CASE("view: another address than loopback comes with a warning that nothing is authenticated", "[view][command]") {
  const auto on_any = test::run_cerulion(
      {"--domain", test::unique_domain("viewcmd"), "view", "--address", "0.0.0.0", "--port", "0", "--duration", "0.5"});
  CHECK(on_any.exit_code == 0);
  CHECK(on_any.err.find("warning: listening on 0.0.0.0: the Foxglove WebSocket protocol has no authentication") !=
        std::string::npos);
  // The URL is the one another machine reaches: this machine's name, not 0.0.0.0.
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(on_any.err.find(fmt::format("on ws://{}:", host)) != std::string::npos);
  CHECK(on_any.err.find("ws://0.0.0.0") == std::string::npos);
  const auto on_localhost = test::run_cerulion(
      {"--domain", test::unique_domain("viewcmd"), "view", "--address", "localhost", "--port", "0", "--duration", "0.5"});
  CHECK(on_localhost.exit_code == 0);
  CHECK(on_localhost.err.find("on ws://localhost:") != std::string::npos);
  CHECK(on_localhost.err.find("warning") == std::string::npos);
  const auto on_loopback =
      test::run_cerulion({"--domain", test::unique_domain("viewcmd"), "view", "--port", "0", "--duration", "0.5"});
  CHECK(on_loopback.exit_code == 0);
  CHECK(on_loopback.err.find("warning") == std::string::npos);
  CHECK(on_loopback.err.find("on ws://127.0.0.1:") != std::string::npos);
}

TEST_CASE("view: Ctrl-C stops it with 0, SIGTERM with 143", "[view][command]") {
  for (const auto& [sig, code] : {std::pair{SIGINT, 0}, std::pair{SIGTERM, 143}}) {
    const std::uint16_t port = free_port();
    test::BackgroundProcess view(
        {test::cerulion_binary(), "--domain", test::unique_domain("viewcmd"), "view", "--port", std::to_string(port)});
    // Serving (its handlers are installed before it listens), then stopped.
    REQUIRE(test::eventually([&] {
      try {
        return test::http_get(port, "/channels.json").status == 200;
      } catch (const std::exception&) {
        return false;
      }
    }));
    view.signal(sig);
    const auto r = view.wait(std::chrono::seconds(20));
    INFO(r.err);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == code);
  }
}

TEST_CASE("view: each choice of --readers serves a topic's messages, and any other is a usage error naming it",
          "[view][command]") {
  const auto bad = test::run_cerulion({"--domain", test::unique_domain("viewcmd"), "view", "--readers", "fast"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--readers: fast not in {pooled,polling,per-topic}") != std::string::npos);

  for (const char* readers : {"pooled", "polling", "per-topic"}) {
    INFO(readers);
    const std::string domain = test::unique_domain("viewcmd");
    const std::uint16_t port = free_port();
    test::BackgroundProcess view({test::cerulion_binary(), "--domain", domain, "view", "--port", std::to_string(port),
                                  "--readers", readers});
    auto pub = publisher_in(domain, "/readers");
    check_serves(port, pub, "/readers");
    view.signal(SIGINT);
    CHECK(view.wait(std::chrono::seconds(20)).exit_code == 0);
  }
}

TEST_CASE("view: started with its standard fds closed it serves, and they are /dev/null, not a socket or eventfd",
          "[view][command][stdio]") {
  for (const bool all : {false, true}) {
    INFO((all ? "<&- >&- 2>&-" : "2>&-"));
    const std::string domain = test::unique_domain("viewcmd");
    const std::uint16_t port = free_port();
    const std::vector<std::string> argv{test::cerulion_binary(), "--domain", domain, "view", "--port", std::to_string(port)};
    test::BackgroundProcess view(all ? test::with_stdio_closed(argv) : test::redirected(argv, "2>&-"));
    auto pub = publisher_in(domain, "/closed_stdio");
    check_serves(port, pub, "/closed_stdio");
    const auto fds = test::standard_fds(view.pid());
    INFO(fds[0] << " " << fds[1] << " " << fds[2]);
    CHECK(fds[2] == "/dev/null");
    if (all) CHECK(fds == std::vector<std::string>(3, "/dev/null"));
    const auto status = test::run_cerulion({"--domain", domain, "view", "status", "--json"});
    CHECK(status.exit_code == 0);
    view.signal(SIGINT);
    CHECK(view.wait(std::chrono::seconds(20)).exit_code == 0);
  }
}

TEST_CASE("view status with no server running says so in one line and exits 1, after an empty list with --json",
          "[view][command][status]") {
  const std::string domain = test::unique_domain("viewstatus");
  auto r = test::run_cerulion({"--domain", domain, "view", "status"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "cerulion: no view server is running in domain '" + domain + "'\n");
  r = test::run_cerulion({"--domain", domain, "view", "status", "--json"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "{\"domain\":\"" + domain + "\",\"views\":[],\"problems\":[]}\n");
  CHECK(r.err == "cerulion: no view server is running in domain '" + domain + "'\n");
}

TEST_CASE("view status lists a running view server in text and in JSON", "[view][command][status]") {
  const std::string domain = test::unique_domain("viewstatus");
  test::BackgroundProcess server({test::cerulion_binary(), "--domain", domain, "view", "--port", "0"});
  test::ProcessResult text;
  REQUIRE(test::eventually([&] {
    text = test::run_cerulion({"--domain", domain, "view", "status"});
    return text.exit_code == 0;
  }));
  INFO(text.out);
  CHECK(text.out.starts_with("view " + std::to_string(server.pid()) + ": domain '" + domain + "' on ws://127.0.0.1:"));
  CHECK(text.out.find("\n  serving: 0 channels, 0 clients, 0 subscriptions, sent 0 messages (0 B), dropped 0") !=
        std::string::npos);
  const auto r = test::run_cerulion({"--domain", domain, "view", "status", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto parsed = json::parse(r.out);
  CHECK(parsed["domain"] == domain);
  CHECK(parsed["problems"].empty());
  REQUIRE(parsed["views"].size() == 1);
  const auto& v = parsed["views"][0];
  CHECK(v["pid"] == server.pid());
  CHECK(v["port"].get<int>() > 0);
  CHECK(v["url"] == "ws://127.0.0.1:" + std::to_string(v["port"].get<int>()));
  CHECK(v["clients"] == 0);
  CHECK(v["channels"].empty());
  // Stopped, it takes its file with it.
  server.signal(SIGINT);
  CHECK(server.wait(std::chrono::seconds(20)).exit_code == 0);
  CHECK(test::run_cerulion({"--domain", domain, "view", "status"}).exit_code == 1);
}

TEST_CASE("view status with a bad option or one of view's own is a usage error, and a topic named so is written with its slash",
          "[view][command][status]") {
  const auto r = test::run_cerulion({"view", "status", "--jsn"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("cerulion: unknown option '--jsn'"));
  CHECK(r.err.find("'cerulion view status --help'") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  // An option of `view` itself given to `view status` is named, not taken and ignored.
  const auto misplaced = test::run_cerulion({"view", "status", "--port", "1"});
  CHECK(misplaced.exit_code == 2);
  CHECK(misplaced.err == "cerulion: --port is an option of 'view ...', not of 'view status'\n");
  // `view /status` serves the topic /status.
  const auto served = test::run_cerulion(
      {"--domain", test::unique_domain("viewcmd"), "view", "/status", "--port", "0", "--duration", "0.5"});
  CHECK(served.exit_code == 0);
  CHECK(served.err.find("serving the chosen topics") != std::string::npos);
}

TEST_CASE("view: messages its tap never read are counted per channel in view status and told to the subscribed client",
          "[view][command][status]") {
  const std::string domain = test::unique_domain("viewlost");
  const std::uint16_t port = free_port();
  test::BackgroundProcess view({test::cerulion_binary(), "--domain", domain, "view", "--port", std::to_string(port)});
  std::optional<test::WsClient> client;
  REQUIRE(test::eventually([&] {
    try {
      client.emplace(port);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }));
  // Made once the view serves: its taps read the topic from its first message.
  auto pub = publisher_in(domain, "/lost");  // a ring of 16
  std::uint64_t published = 0;
  REQUIRE(pub.publish_text("first").ok());
  ++published;
  const json channel = channel_of(*client, "/lost");
  REQUIRE_FALSE(channel.is_null());
  subscribe(*client, 1, channel["id"].get<std::uint32_t>());
  std::optional<std::string> frame;
  for (int i = 0; i < 200 && !frame; ++i, ++published) {
    REQUIRE(pub.publish_text("warm").ok());
    frame = next_binary(*client, std::chrono::milliseconds(50));
  }
  REQUIRE(frame.has_value());
  REQUIRE(tap_has_read("/lost", domain, published));

  // The view gets no CPU while 100 messages go out: its tap falls behind a ring of 16.
  view.signal(SIGSTOP);
  REQUIRE(test::eventually([&] { return test::process_state(view.pid()) == 'T'; }));
  for (int i = 0; i < 100; ++i, ++published) REQUIRE(pub.publish_text(std::to_string(i)).ok());
  view.signal(SIGCONT);

  json counted;
  std::string last_status;
  const bool settled = test::eventually([&] {
    const auto r = test::run_cerulion({"--domain", domain, "view", "status", "--json"});
    last_status = r.out;
    if (r.exit_code != 0) return false;
    const auto parsed = json::parse(r.out);
    for (const auto& c : parsed["views"][0]["channels"]) {
      if (c["topic"] == "/lost" && c.value("lost", 0) + c["messages"].get<std::uint64_t>() == published) {
        counted = parsed["views"][0];
        return true;
      }
    }
    return false;
  });
  INFO("published " << published << "; " << last_status);
  REQUIRE(settled);
  INFO(counted.dump());
  const std::uint64_t lost = counted["channels"][0]["lost"];
  CHECK(lost > 0);
  CHECK(lost < 100);
  CHECK(counted["lost"] == lost);
  // The client is told, once, how many of its channel's messages were lost.
  json told;
  for (json status = next_op(*client, "status"); !status.is_null(); status = next_op(*client, "status")) {
    if (status["message"].get<std::string>().find("lost ") == 0) {
      told = status;
      break;
    }
  }
  INFO(told.dump());
  CHECK(told["level"] == 1);
  CHECK(told["message"].get<std::string>().find("lost " + std::to_string(lost) + " messages of '/lost' before the view read them") == 0);
  const auto text = test::run_cerulion({"--domain", domain, "view", "status"});
  CHECK(text.out.find(", lost " + std::to_string(lost) + "\n") != std::string::npos);
  view.signal(SIGINT);
  CHECK(view.wait(std::chrono::seconds(20)).exit_code == 0);
}
