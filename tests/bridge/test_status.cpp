// SPDX-License-Identifier: Apache-2.0
// A bridge's status file, without a bridge: written whole and read back, a dead bridge's file
// removed on the way, and what a hostile user leaves in its place refused or reported.

#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "cerulion/bridge/status.hpp"
#include "child.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

using namespace cerulion;

TEST_CASE("A bridge status file is read back as written, and a dead bridge's file goes", "[bridge][status]") {
  const std::string domain = test::unique_domain("status");
  bridge::BridgeStatus mine;
  mine.pid = static_cast<std::uint32_t>(::getpid());
  mine.domain = domain;
  mine.direction = "export";
  mine.topics.push_back({.topic = "/a", .dds_topic = "rt/a", .dds_type = "t", .messages = 3});
  const std::string path = bridge::status_file_path(bridge::kDefaultStatusDirectory, domain, mine.pid);
  REQUIRE(bridge::write_status_file(path, mine).ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  // A bridge killed with -9 leaves its file: whoever lists the bridges removes it.
  const auto dead_pid = static_cast<std::uint32_t>(test::exited_pid());
  bridge::BridgeStatus theirs = mine;
  theirs.pid = dead_pid;
  const std::string dead_path = bridge::status_file_path(bridge::kDefaultStatusDirectory, domain, dead_pid);
  REQUIRE(bridge::write_status_file(dead_path, theirs).ok());

  auto listing = bridge::read_status_files(bridge::kDefaultStatusDirectory, domain);
  REQUIRE(listing.ok());
  CHECK(listing->problems.empty());
  REQUIRE(listing->bridges.size() == 1);
  CHECK(listing->bridges[0].pid == mine.pid);
  REQUIRE(listing->bridges[0].topics.size() == 1);
  CHECK(listing->bridges[0].topics[0].messages == 3);
  CHECK_FALSE(std::filesystem::exists(dead_path));
  CHECK(test::count_shm_entries("cerulion-bridge." + domain + ".") == 1);  // and no copy was left aside
  ::unlink(path.c_str());
}

TEST_CASE("Hostile entries in place of a bridge status file are refused or reported, never followed or waited on",
          "[bridge][status][hostile]") {
  test::check_hostile_entries(test::bridge_status_kind());
}
