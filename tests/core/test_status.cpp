// SPDX-License-Identifier: Apache-2.0
// Status and Result: what an error carries (code, message, subject), and that core's errors say
// what they are about as data: the topic, the domain, the size over a ceiling.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "helpers.hpp"
#include "child.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("A success is a code and a pointer, and holds neither a message nor a subject", "[status]") {
  static_assert(sizeof(Status) <= 2 * sizeof(void*));
  Status ok;
  CHECK(ok.ok());
  CHECK(ok.message().empty());
  CHECK(ok.subject().empty());
  Status still_ok = Status::success().about(Subject::topic("/x"));
  CHECK(still_ok.ok());
  CHECK(still_ok.subject().empty());
}

TEST_CASE("An error keeps its code, message and subject through copies, moves and a Result", "[status]") {
  const Status error(ErrorCode::PayloadTooLarge, "payload of 64 bytes is over topic '/x' ceiling of 16 bytes",
                     Subject::size_over("/x", 64, 16));
  Status copy = error;
  Status moved = std::move(copy);
  Result<int> result(moved);
  for (const Status* st : std::initializer_list<const Status*>{&error, &moved, &result.status()}) {
    CHECK(st->code() == ErrorCode::PayloadTooLarge);
    CHECK(st->message() == "payload of 64 bytes is over topic '/x' ceiling of 16 bytes");
    CHECK(st->subject() == Subject::size_over("/x", 64, 16));
  }
  CHECK(result.subject().kind == SubjectKind::Size);
  CHECK(result.subject().asked == 64);
  CHECK(result.subject().ceiling == 16);

  Result<int> made(ErrorCode::NotFound, "no such file '/tmp/a'", Subject::path("/tmp/a"));
  CHECK(made.subject() == Subject::path("/tmp/a"));
  CHECK(Result<int>(5).subject().empty());
}

TEST_CASE("An error without a subject gets one from about(), and one with a subject keeps its own", "[status]") {
  Status plain(ErrorCode::SystemError, "topic '/x': cannot map the segment");
  CHECK(plain.subject().empty());
  Status about = std::move(plain).about(Subject::topic("/x"));
  CHECK(about.code() == ErrorCode::SystemError);
  CHECK(about.message() == "topic '/x': cannot map the segment");
  CHECK(about.subject() == Subject::topic("/x"));

  Status option(ErrorCode::InvalidArgument, "depth must be 1..4096", Subject::option("depth"));
  CHECK(std::move(option).about(Subject::topic("/x")).subject() == Subject::option("depth"));

  Status bare(ErrorCode::Timeout, "");
  CHECK(std::move(bare).about(Subject::topic("/y")).subject() == Subject::topic("/y"));
}

TEST_CASE("A bad topic or domain name is an error about that name, as given", "[status][names]") {
  CHECK(normalize_topic_name("/a/../b").subject() == Subject::topic("/a/../b"));
  CHECK(normalize_topic_name("/caf\xc3\xa9").subject() == Subject::topic("/caf\xc3\xa9"));
  CHECK(validate_domain("a.b").subject() == Subject::domain("a.b"));
  CHECK(validate_domain("").subject() == Subject::domain(""));
  PublisherOptions options;
  options.topic.domain = "no/slash";
  CHECK(Publisher::create("/fine", options).subject() == Subject::domain("no/slash"));
}

TEST_CASE("A loan over a topic's ceiling is an error about that size: the topic, the size and the ceiling",
          "[status]") {
  const std::string topic = unique_topic("status_ceiling");
  PublisherOptions options;
  options.topic.max_payload = 16;
  auto pub = Publisher::create(topic, options);
  REQUIRE(pub.ok());
  auto loan = pub->loan(64);
  REQUIRE_FALSE(loan.ok());
  CHECK(loan.code() == ErrorCode::PayloadTooLarge);
  CHECK(loan.subject() == Subject::size_over(topic, 64, 16));
  auto copied = pub->publish_copy(bytes_of(std::string(17, 'x')));
  CHECK(copied.subject() == Subject::size_over(topic, 17, 16));
}

TEST_CASE("Joining a topic against its settings, or a file in its place, is an error about that topic",
          "[status]") {
  const std::string topic = unique_topic("status_join");
  auto first = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(first.ok());
  auto deeper = Publisher::create(topic, publisher_options(Mode::Lockstep, 8));
  CHECK(deeper.code() == ErrorCode::Incompatible);
  CHECK(deeper.subject() == Subject::topic(topic));
  auto free_run = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
  CHECK(free_run.code() == ErrorCode::Incompatible);
  CHECK(free_run.subject() == Subject::topic(topic));

  const std::string domain = "status" + std::to_string(::getpid());
  const std::string planted = shm_path("/planted", domain);
  REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
  SubscriberOptions sub_options;
  sub_options.topic.domain = domain;
  auto sub = Subscriber::create("/planted", sub_options);
  CHECK(sub.code() == ErrorCode::Corrupted);
  CHECK(sub.subject() == Subject::topic("/planted"));
  auto info = inspect_topic("/planted", domain);
  CHECK(info.code() == ErrorCode::Corrupted);
  CHECK(info.subject() == Subject::topic("/planted"));
  ::unlink(planted.c_str());

  auto missing = inspect_topic("/never_made", domain);
  CHECK(missing.code() == ErrorCode::NotFound);
  CHECK(missing.subject() == Subject::topic("/never_made"));
}

TEST_CASE("A setting out of range is an error about that setting, not the topic", "[status]") {
  PublisherOptions options;
  options.topic.depth = 0;
  auto pub = Publisher::create(unique_topic("status_depth"), options);
  CHECK(pub.code() == ErrorCode::InvalidArgument);
  CHECK(pub.subject() == Subject::option("depth"));
}

TEST_CASE("A Result holding an error used as its value ends the process with the error's own message", "[status]") {
  int err[2];
  REQUIRE(::pipe(err) == 0);
  Child child([&](Child&) {
    ::dup2(err[1], STDERR_FILENO);
    std::signal(SIGABRT, SIG_DFL);  // the abort itself, not Catch2's report of it
    Result<std::string> missing(ErrorCode::NotFound, "topic '/nobody': no message within 1 s",
                                Subject::topic("/nobody"));
    return static_cast<int>(missing->size());
  });
  ::close(err[1]);
  const int code = child.join();
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(err[0], buffer, sizeof buffer)) > 0;) said.append(buffer, static_cast<std::size_t>(n));
  ::close(err[0]);
  CHECK(code == 128 + SIGABRT);
  CHECK_THAT(said, Catch::Contains("topic '/nobody': no message within 1 s"));
  CHECK_THAT(said, Catch::Contains("used as its value"));
}
