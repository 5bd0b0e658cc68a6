// SPDX-License-Identifier: Apache-2.0
// The CLI's one error adapter (cli/errors.hpp) as a unit: exit code and wording from a Status's
// code and subject, whatever its message says.

#include <catch2/catch.hpp>

#include "errors.hpp"

using namespace cerulion;
using cerulion::cli::ErrorContext;
using cerulion::cli::exit_code;
using cerulion::cli::failure;
using cerulion::cli::printable;

TEST_CASE("A bad name, value, option or pattern exits 2, and what is found wrong on the machine exits 1",
          "[cli][errors]") {
  CHECK(exit_code(Status(ErrorCode::InvalidTopicName, "invalid topic name 'a b'", Subject::topic("a b"))) == 2);
  CHECK(exit_code(Status(ErrorCode::InvalidArgument, "a rate must be positive")) == 2);
  CHECK(exit_code(Status(ErrorCode::InvalidArgument, "depth must be 1..4096", Subject::option("depth"))) == 2);
  CHECK(exit_code(Status(ErrorCode::InvalidArgument, "pattern '([': not valid", Subject::pattern("(["))) == 2);
  // Whatever the code, an error about a file or a running process is not the command line's.
  CHECK(exit_code(Status(ErrorCode::InvalidArgument, "/tmp/f: not a regular file", Subject::path("/tmp/f"))) == 1);
  CHECK(exit_code(Status(ErrorCode::InvalidArgument, "a keeper already runs (pid 7)", Subject::process("7"))) == 1);
  for (auto code : {ErrorCode::NotFound, ErrorCode::PermissionDenied, ErrorCode::Corrupted, ErrorCode::Incompatible,
                    ErrorCode::OutOfMemory, ErrorCode::Timeout, ErrorCode::SystemError, ErrorCode::PayloadTooLarge}) {
    INFO(to_string(code));
    CHECK(exit_code(Status(code, "topic '/x': something", Subject::topic("/x"))) == 1);
    CHECK(exit_code(Status(code, "something")) == 1);
  }
  CHECK(exit_code(Status()) == 0);
}

TEST_CASE("An interrupted call ends without a line, with the code of the signal that stopped it", "[cli][errors]") {
  auto exit = failure(Status(ErrorCode::Interrupted, "interrupted"), "/x");
  CHECK(exit.code == cli::stop_exit_code());
  CHECK(exit.code == 130);  // no signal came in this test: Ctrl-C's code
  CHECK(exit.message.empty());
}

TEST_CASE("The context is said before an error unless the error is about it", "[cli][errors]") {
  // Its subject is the context: the message names it already, so it is not said twice.
  auto named = failure(Status(ErrorCode::Corrupted, "topic '/x': /dev/shm/f is a FIFO", Subject::topic("/x")),
                       "/x");
  CHECK(named.message == "topic '/x': /dev/shm/f is a FIFO");
  CHECK(named.code == 1);
  // About another thing, or about nothing in particular: the context goes first.
  CHECK(failure(Status(ErrorCode::Corrupted, "topic '/y': damaged", Subject::topic("/y")), "/x").message ==
        "/x: topic '/y': damaged");
  CHECK(failure(Status(ErrorCode::SystemError, "cannot watch /dev/shm"), "/x").message ==
        "/x: cannot watch /dev/shm");
  CHECK(failure(Status(ErrorCode::NotFound, "/tmp/a.mcap: no such file", Subject::path("/tmp/a.mcap")),
                "cannot dump")
            .message == "cannot dump: /tmp/a.mcap: no such file");
  // Text that merely looks like the context does not count: only the subject does.
  CHECK(failure(Status(ErrorCode::SystemError, "something about '/x'"), "/x").message ==
        "/x: something about '/x'");
  // No context: the message alone; no message either: the code's name.
  CHECK(failure(Status(ErrorCode::NotFound, "no topic '/x' in domain 'd'", Subject::topic("/x"))).message ==
        "no topic '/x' in domain 'd'");
  CHECK(failure(Status(ErrorCode::SystemError, "")).message == "system error");
}

TEST_CASE("A size over a ceiling is said as the option's that set it, from the numbers, and exits 2",
          "[cli][errors]") {
  const Status too_large(ErrorCode::PayloadTooLarge, "a payload of 4096 bytes is over topic '/p/ping' ceiling",
                         Subject::size_over("/p/ping", 4096, 1024));
  auto exit = failure(too_large, {.what = "ping", .size_option = "--size"});
  CHECK(exit.code == 2);
  CHECK(exit.message == "ping: --size 4096 is over the topic's ceiling of 1024 bytes");
  // No option set the size: the library's own words, a failure like any other.
  auto plain = failure(too_large, "/p/ping");
  CHECK(plain.code == 1);
  CHECK(plain.message == too_large.message());
  // An option given, but the error is about something else: it is not reworded.
  auto other = failure(Status(ErrorCode::Timeout, "timed out"), {.what = "ping", .size_option = "--size"});
  CHECK(other.message == "ping: timed out");
}

TEST_CASE("check() throws the adapter's Exit for an error and nothing for a success", "[cli][errors]") {
  CHECK_NOTHROW(cli::check(Status(), "/x"));
  try {
    cli::check(Status(ErrorCode::InvalidTopicName, "invalid topic name '/a b'", Subject::topic("/a b")), "/a b");
    FAIL("check did not throw");
  } catch (const cli::Exit& e) {
    CHECK(e.code == 2);
    CHECK(e.message == "invalid topic name '/a b'");
  }
  CHECK(cli::take(Result<int>(7), "/x") == 7);
  CHECK_THROWS_AS(cli::take(Result<int>(ErrorCode::NotFound, "gone"), "/x"), cli::Exit);
}

TEST_CASE("User text in an error line shows its control characters escaped and nothing else changed",
          "[cli][errors]") {
  CHECK(printable("a\x1b[31mb\rc\nd\x07" "e\x7f\tf") == "a\\x1b[31mb\\x0dc\\x0ad\\x07e\\x7f\\x09f");
  // A C1 control in UTF-8 is one too; other characters, and text escaped once already, stay.
  CHECK(printable("\xc2\x9b" "2J caf\xc3\xa9 \\x1b") == "\\xc2\\x9b2J caf\xc3\xa9 \\x1b");
  // The adapter's line escapes the message and the context alike.
  auto line = failure(Status(ErrorCode::NotFound, "/tmp/a\nb: no such file", Subject::path("/tmp/a\nb")), "dump\r");
  CHECK(line.message == "dump\\x0d: /tmp/a\\x0ab: no such file");
}
