// SPDX-License-Identifier: Apache-2.0
// A view server's status file: written whole and read back, a dead server's file removed on the
// way, what a hostile user leaves in its place refused or reported, and a running server's file
// with its counts, gone once it stops.

#include <filesystem>
#include <sys/stat.h>

#include "cerulion/view/status.hpp"
#include "child.hpp"
#include "shm_objects.hpp"
#include "view_helpers.hpp"

using namespace viewtest;

TEST_CASE("A view status file is read back as written, and a dead server's file goes", "[view][status]") {
  const std::string domain = test::unique_domain("vstatus");
  view::ViewStatus mine;
  mine.pid = static_cast<std::uint32_t>(::getpid());
  mine.domain = domain;
  mine.url = "ws://127.0.0.1:8765";
  mine.port = 8765;
  mine.counts.clients = 2;
  mine.counts.bytes_sent = 1234;
  mine.counts.channels.push_back({.id = 7, .topic = "/imu", .encoding = "json", .messages = 3, .last_size = 40});
  const std::string path = view::status_file_path(view::kDefaultStatusDirectory, domain, mine.pid);
  REQUIRE(view::write_status_file(path, mine).ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  // A server killed with -9 leaves its file: whoever lists the servers removes it.
  view::ViewStatus theirs = mine;
  theirs.pid = static_cast<std::uint32_t>(test::exited_pid());
  const std::string dead_path = view::status_file_path(view::kDefaultStatusDirectory, domain, theirs.pid);
  REQUIRE(view::write_status_file(dead_path, theirs).ok());

  auto listing = view::read_status_files(view::kDefaultStatusDirectory, domain);
  REQUIRE(listing.ok());
  CHECK(listing->problems.empty());
  REQUIRE(listing->views.size() == 1);
  const auto& read = listing->views[0];
  CHECK(read.pid == mine.pid);
  CHECK(read.url == mine.url);
  CHECK(read.counts.clients == 2);
  CHECK(read.counts.bytes_sent == 1234);
  REQUIRE(read.counts.channels.size() == 1);
  CHECK(read.counts.channels[0].topic == "/imu");
  CHECK(read.counts.channels[0].last_size == 40);
  CHECK_FALSE(std::filesystem::exists(dead_path));
  CHECK(test::count_shm_entries("cerulion-view." + domain + ".") == 1);  // and no copy was left aside
  ::unlink(path.c_str());
}

TEST_CASE("Hostile entries in place of a view status file are refused or reported, never followed or waited on",
          "[view][status][hostile]") {
  test::check_hostile_entries(test::view_status_kind());
}

TEST_CASE("A running view server's status file is kept up to date with its counts and goes at stop()",
          "[view][status]") {
  LiveServer live;
  const std::string topic = test::unique_topic("counted");
  auto [pub, client, channel] = read_topic(live, topic);
  subscribe(*client, 1, channel["id"].get<std::uint32_t>());
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 1; }));
  REQUIRE(pub.publish_text("second").ok());
  REQUIRE(next_binary(*client));

  std::optional<view::ViewStatus> seen;
  CHECK(test::eventually(
      [&] {
        auto listing = view::read_status_files(view::kDefaultStatusDirectory, live.domain);
        if (!listing || listing->views.size() != 1) return false;
        seen = listing->views[0];
        return seen->counts.messages_sent >= 1 && !seen->counts.channels.empty() &&
               seen->counts.channels[0].messages >= 2;
      }));
  REQUIRE(seen);
  CHECK(seen->pid == static_cast<std::uint32_t>(::getpid()));
  CHECK(seen->port == live.port());
  CHECK(seen->url == live.server->url());
  CHECK(seen->counts.clients == 1);
  CHECK(seen->counts.subscriptions == 1);
  CHECK(seen->counts.bytes_sent > 0);
  CHECK(seen->counts.channels[0].topic == topic);
  CHECK(seen->updated_realtime_ns >= seen->started_realtime_ns);

  live.server->stop();
  CHECK(test::count_shm_entries("cerulion-view." + live.domain + ".") == 0);
  auto after = view::read_status_files(view::kDefaultStatusDirectory, live.domain);
  REQUIRE(after.ok());
  CHECK(after->views.empty());
}

TEST_CASE("A view server told not to keep a status file keeps none", "[view][status]") {
  view::ViewOptions options;
  options.status_file = false;
  LiveServer live(options);
  CHECK(test::count_shm_entries("cerulion-view." + live.domain + ".") == 0);
}
