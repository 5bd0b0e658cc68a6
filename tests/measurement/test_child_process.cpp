// SPDX-License-Identifier: Apache-2.0
// The child-process helper: output collected whatever its size, input given, programs that cannot
// run reported, a stop that reaches what the child started, the parent-death signal, descriptors
// passed and none leaked.

#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "cerulion/measurement/child_process.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using namespace std::chrono_literals;

namespace {

ChildOptions shell(const std::string& script) {
  ChildOptions o;
  o.argv = {"sh", "-c", script};
  o.out = Stream::Capture;
  o.err = Stream::Capture;
  return o;
}

}  // namespace

TEST_CASE("A child's output is collected however much it writes, with its exit code", "[measurement][child]") {
  // A megabyte on stdout fills any pipe many times over: a capture must not block the child.
  auto child = ChildProcess::start(shell("head -c 1048576 /dev/zero; echo oops >&2; exit 3"));
  REQUIRE(child.ok());
  const ChildExit end = child->wait();
  CHECK(end.exit_code == 3);
  CHECK(end.signal == 0);
  CHECK(end.out.size() == 1048576);
  CHECK(end.err == "oops\n");
  // Collected once, said again.
  auto again = child->wait_for(0s);
  REQUIRE(again);
  CHECK(again->exit_code == 3);
}

TEST_CASE("A child reads the input it was given, then end of file", "[measurement][child]") {
  ChildOptions o = shell("cat; echo end");
  o.in = Stream::Capture;
  o.input = "line one\nline two\n";
  auto child = ChildProcess::start(o);
  REQUIRE(child.ok());
  CHECK(child->wait().out == "line one\nline two\nend\n");
}

TEST_CASE("A program that cannot run is an error naming it, not a child exiting 127", "[measurement][child]") {
  ChildOptions o;
  o.argv = {"cerulion-no-such-program"};
  auto missing = ChildProcess::start(o);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == ErrorCode::NotFound);
  CHECK(missing.message().find("cerulion-no-such-program") != std::string::npos);

  o.program = "/dev/null";  // exists, not executable
  auto refused = ChildProcess::start(o);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().find("/dev/null") != std::string::npos);
}

TEST_CASE("The environment given replaces the caller's variables of the same name", "[measurement][child]") {
  ::setenv("CERULION_CHILD_TEST_KEPT", "kept", 1);
  ::setenv("CERULION_CHILD_TEST_REPLACED", "old", 1);
  ChildOptions o = shell("echo $CERULION_CHILD_TEST_KEPT $CERULION_CHILD_TEST_REPLACED $CERULION_CHILD_TEST_ADDED");
  o.environment = {"CERULION_CHILD_TEST_REPLACED=new", "CERULION_CHILD_TEST_ADDED=added"};
  auto child = ChildProcess::start(o);
  REQUIRE(child.ok());
  CHECK(child->wait().out == "kept new added\n");
}

TEST_CASE("Stopping a child kills what it started in its group, even what ignores SIGTERM", "[measurement][child]") {
  const std::string pid_file = cerulion::test::fresh_temp_path("grandchild");
  // The shell and its background sleep both ignore SIGTERM; the sleep is the grandchild.
  auto child = ChildProcess::start(shell("trap '' TERM; sleep 1000 & echo $! > " + pid_file + "; wait"));
  REQUIRE(child.ok());
  REQUIRE(cerulion::test::eventually([&] { return std::ifstream(pid_file).peek() != EOF; }));
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  REQUIRE(grandchild > 0);
  const ChildExit end = child->stop(100ms);
  CHECK(end.signal == SIGKILL);
  CHECK(cerulion::test::eventually([&] { return cerulion::test::process_gone(grandchild); }));
}

TEST_CASE("A child that exits ends its group: what it left running there is killed", "[measurement][child]") {
  const std::string pid_file = cerulion::test::fresh_temp_path("grandchild");
  auto child = ChildProcess::start(shell("sleep 1000 > /dev/null 2>&1 & echo $! > " + pid_file));
  REQUIRE(child.ok());
  CHECK(child->wait().exit_code == 0);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(cerulion::test::eventually([&] { return cerulion::test::process_gone(grandchild); }));
}

TEST_CASE("A child dies with the thread that started it", "[measurement][child]") {
  ChildProcess child;
  std::thread starter([&] {
    ChildOptions o;
    o.argv = {"sleep", "1000"};
    auto started = ChildProcess::start(o);
    if (started) child = std::move(*started);
  });
  starter.join();  // the thread is gone: the child gets its parent-death signal (SIGTERM)
  REQUIRE(child.pid() > 0);
  auto end = child.wait_for(30s);
  REQUIRE(end);
  CHECK(end->signal == SIGTERM);
}

TEST_CASE("Descriptors passed become 3, 4... in the child and no other descriptor leaks", "[measurement][child]") {
  auto results = open_anonymous_file();
  REQUIRE(results.ok());
  // A descriptor of the caller without close-on-exec, where a careless fork would leak it.
  const int leaky = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaky >= 0);
  const int high = ::dup2(leaky, 200);
  REQUIRE(high == 200);
  ChildOptions o = shell("echo written >&3; test -e /proc/self/fd/200 && echo leaked");
  o.pass_fds = {*results};
  auto child = ChildProcess::start(o);
  REQUIRE(child.ok());
  const ChildExit end = child->wait();
  CHECK(end.out.empty());
  char buffer[16] = {};
  CHECK(::pread(*results, buffer, sizeof buffer - 1, 0) == 8);
  CHECK(std::string(buffer) == "written\n");
  ::close(*results);
  ::close(leaky);
  ::close(high);
}

TEST_CASE("A wait ends at its timeout, or at once when its cancel flag is set", "[measurement][child]") {
  ChildOptions o;
  o.argv = {"sleep", "1000"};
  auto child = ChildProcess::start(o);
  REQUIRE(child.ok());
  CHECK_FALSE(child->wait_for(10ms));
  std::atomic<bool> cancel{true};
  CHECK_FALSE(child->wait_for(1h, &cancel));
  CHECK(child->running());
  const ChildExit end = child->stop();
  CHECK(end.signal == SIGTERM);
  CHECK_FALSE(child->running());
}
