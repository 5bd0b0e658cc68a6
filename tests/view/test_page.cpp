// SPDX-License-Identifier: Apache-2.0
// The page a view server serves on GET /, loaded in headless Chromium (Debian's `chromium`)
// against a live json topic: its DOM lists the topic and shows the selected field's value
// advancing. Skips, with a clear message, when Chromium is not installed.

#include <atomic>
#include <cstdlib>
#include <regex>
#include <thread>

#include "topic_types.hpp"
#include "view_helpers.hpp"

using namespace viewtest;

namespace {

// The DOM after the page ran for `budget_ms` of virtual time.
std::string dumped_dom(const std::string& url, int budget_ms) {
  const auto r = test::run_process({"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                    "--user-data-dir=" + test::fresh_temp_path("chromium"),
                                    "--virtual-time-budget=" + std::to_string(budget_ms), "--dump-dom", url},
                                   {}, std::chrono::seconds(90));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// The number in <b id="value">...</b>, or nullopt.
std::optional<double> shown_value(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(R"re(id="value">(-?[0-9.eE+-]+)<)re"))) return std::nullopt;
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("The page lists the topic and shows its field's value advancing", "[view][page]") {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    WARN("skipped: chromium not installed");
    return;
  }
  LiveServer live;
  const std::string topic = test::unique_topic("page");
  auto pub = live.publisher(topic, test::imu_json_type());
  std::atomic<bool> stop{false};
  std::thread publishing([&] {
    for (int k = 0; !stop.load(); ++k) {
      (void)pub.publish_text(json{{"x", k}, {"label", "imu"}}.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Join() {
      stop = true;
      thread.join();
    }
  } join{stop, publishing};
  REQUIRE(tap_has_read(topic, live.domain, 1));
  const std::string url = "http://127.0.0.1:" + std::to_string(live.port()) + "/?topic=" + topic + "&field=x";
  const std::string first = dumped_dom(url, 10000);
  INFO(first);
  CHECK(first.find("data-topic=\"" + topic + "\"") != std::string::npos);
  CHECK(first.find(">json<") != std::string::npos);
  const auto a = shown_value(first);
  REQUIRE(a);
  const std::string second = dumped_dom(url, 10000);
  const auto b = shown_value(second);
  REQUIRE(b);
  CHECK(*b > *a);
}

TEST_CASE("The page says what it can do, and that a ?topic= naming nothing is followed once published",
          "[view][page]") {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    WARN("skipped: chromium not installed");
    return;
  }
  LiveServer live;
  const std::string dom = dumped_dom("http://127.0.0.1:" + std::to_string(live.port()) + "/?topic=/nothing", 3000);
  INFO(dom);
  CHECK(dom.find("Click a topic to follow it") != std::string::npos);
  CHECK(dom.find("ws://127.0.0.1:" + std::to_string(live.port()) + "</code>") != std::string::npos);
  CHECK(dom.find("?topic=/nothing names no topic served now: it is followed when it is published") !=
        std::string::npos);
}

TEST_CASE("The page counts a raw topic it follows without the server sending it the messages", "[view][page]") {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    WARN("skipped: chromium not installed");
    return;
  }
  LiveServer live;
  const std::string topic = test::unique_topic("raw");
  auto pub = live.publisher(topic);
  std::atomic<bool> stop{false};
  std::thread publishing([&] {
    while (!stop.load()) {
      (void)pub.publish_text("frame");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Join() {
      stop = true;
      thread.join();
    }
  } join{stop, publishing};
  REQUIRE(tap_has_read(topic, live.domain, 1));
  const std::string dom =
      dumped_dom("http://127.0.0.1:" + std::to_string(live.port()) + "/?topic=" + topic, 5000);
  INFO(dom);
  // The DOM holds the script's text too: these are what only the page's rendering writes.
  CHECK(dom.find(topic + " (x-cerulion-bytes: counted here, not shown") != std::string::npos);
  CHECK(dom.find("<div id=\"note\"></div>") != std::string::npos);
  CHECK(live.server->counts().connections >= 1);
  CHECK(live.server->counts().messages_sent == 0);
}
