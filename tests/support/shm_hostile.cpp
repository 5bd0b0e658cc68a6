// SPDX-License-Identifier: Apache-2.0
// What a hostile local user can leave where an object of cerulion's goes in /dev/shm, each case
// written once for every kind (shm_objects.hpp).

#include "shm_objects.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include "cerulion/core/detail/shm_directory.hpp"
#include "process.hpp"
#include "within.hpp"

using namespace std::chrono_literals;

namespace cerulion::test {
namespace {

constexpr uid_t kOtherUser = 65534;   // nobody
constexpr gid_t kOtherGroup = 65534;  // nogroup

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

/// Removes what a case left at `path`: an object, or what was put in its place (a link is removed,
/// never followed).
void remove_entry(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::string contents(const std::string& path) {
  std::string text(64, '\0');
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "(cannot open)";
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  text.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return text;
}

/// Both listings name the entry at `path` with `what` it is: core's one listing of the kind's
/// files, and the kind's own listing (topic list, flashback status, bridge status) where it has one.
void check_listed(const ShmObjectKind& kind, const std::string& what) {
  const auto name = std::filesystem::path(kind.path).filename().string();
  const detail::ShmKind shm_kind{kind.prefix, kind.noun};
  const auto entries = within(5s, [&] { return detail::list_objects(shm_kind, name); });
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 1);
  CHECK(entries->front().problem == kind.path + " is " + what + ", not a " + kind.noun);
  if (kind.listing_problems) {
    const auto problems = within(5s, kind.listing_problems);
    REQUIRE(problems.has_value());
    INFO("the " << kind.noun << "s' own listing");
    CHECK(mentions(*problems, kind.path + " is " + what));
  }
}

/// Making an object where `what` is: it never blocks, and fails saying what is there unless the
/// kind replaces (or never meets) such an entry. `replaceable`: whether a rename may go over it.
void check_made_over(const ShmObjectKind& kind, const std::string& what, bool replaceable) {
  const auto made = within(5s, kind.make);
  REQUIRE(made.has_value());
  INFO("making a " << kind.noun << " where " << what << " is: " << made->message());
  switch (kind.in_its_place) {
    case InItsPlace::Refused:
      CHECK(made->code() == ErrorCode::Corrupted);
      CHECK(made->message().find(what) != std::string::npos);
      break;
    case InItsPlace::Replaced:
      if (replaceable) {
        REQUIRE(made->ok());
        CHECK(kind.open(kind.path).ok());
      } else {
        CHECK(made->code() == ErrorCode::Corrupted);
        CHECK(made->message().find(what) != std::string::npos);
      }
      break;
    case InItsPlace::Avoided:
      REQUIRE(made->ok());
      CHECK((*made)->path != kind.path);
      remove_entry((*made)->path);
      break;
  }
}

/// Opening what is at `path` does not block and fails with `code`, the message naming `text`.
void check_refused(const ShmObjectKind& kind, const std::string& path, ErrorCode code, const std::string& text) {
  const auto opened = within(5s, [&] { return kind.open(path); });
  REQUIRE(opened.has_value());
  INFO("opening a " << kind.noun << ": " << opened->message());
  CHECK(opened->code() == code);
  CHECK(opened->message().find(text) != std::string::npos);
  CHECK(opened->message().find('\n') == std::string::npos);
}

}  // namespace

void check_hostile_entries(const ShmObjectKind& kind) {
  INFO("kind: " << kind.noun << ", at " << kind.path);
  SECTION("a FIFO in its place is reported, never waited on") {
    REQUIRE(::mkfifo(kind.path.c_str(), 0666) == 0);
    check_refused(kind, kind.path, ErrorCode::Corrupted, kind.path + " is a FIFO, not a " + kind.noun);
    check_listed(kind, "a FIFO");
    check_made_over(kind, "a FIFO", true);
  }
  SECTION("a symbolic link in its place is reported, never followed") {
    const std::string target = "/dev/shm/cerulion-test-target." + std::to_string(::getpid());
    {
      const int fd = ::open(target.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
      REQUIRE(fd >= 0);
      REQUIRE(::write(fd, "target", 6) == 6);
      ::close(fd);
    }
    REQUIRE(::symlink(target.c_str(), kind.path.c_str()) == 0);
    check_refused(kind, kind.path, ErrorCode::Corrupted, kind.path + " is a symbolic link, not a " + kind.noun);
    check_listed(kind, "a symbolic link");
    check_made_over(kind, "a symbolic link", true);
    CHECK(contents(target) == "target");  // what the link points at is never touched
    ::unlink(target.c_str());
  }
  SECTION("a directory in its place is reported, never entered") {
    REQUIRE(::mkdir(kind.path.c_str(), 0700) == 0);
    const std::string inside = kind.path + "/inside";
    REQUIRE(::mkdir(inside.c_str(), 0700) == 0);
    check_refused(kind, kind.path, ErrorCode::Corrupted, kind.path + " is a directory, not a " + kind.noun);
    check_listed(kind, "a directory");
    check_made_over(kind, "a directory", false);
    struct stat st {};
    CHECK(::stat(inside.c_str(), &st) == 0);
    ::rmdir(inside.c_str());
  }
  SECTION("another user's object is refused, even to root, naming its owner") {
    if (::geteuid() != 0) {
      WARN("skipped: needs root to give a " << kind.noun << " to another user");
      return;
    }
    auto made = kind.make();
    REQUIRE(made.ok());
    REQUIRE(::chown(made->path.c_str(), kOtherUser, kOtherGroup) == 0);
    check_refused(kind, made->path, ErrorCode::PermissionDenied, "belongs to user 'nobody'");
    if (kind.in_its_place == InItsPlace::Refused) {
      const auto again = kind.make();
      CHECK(again.code() == ErrorCode::PermissionDenied);
    }
    remove_entry(made->path);
  }
  SECTION("random bytes in its header are called damage, never trusted") {
    auto made = kind.make();
    REQUIRE(made.ok());
    std::mt19937 rng(static_cast<unsigned>(::getpid()));
    std::string noise(64, '\0');
    for (auto& c : noise) c = static_cast<char>(rng());
    const int fd = ::open(made->path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, noise.data(), noise.size(), 0) == static_cast<ssize_t>(noise.size()));
    ::close(fd);
    check_refused(kind, made->path, ErrorCode::Corrupted, "");
    remove_entry(made->path);
  }
  remove_entry(kind.path);
  CHECK(count_shm_entries(std::filesystem::path(kind.path).filename().string()) == 0);
}

}  // namespace cerulion::test
