// SPDX-License-Identifier: Apache-2.0
// Verifications of the example filter node (examples/imu_filter.cpp) through the library: a golden
// file kept from one run verifies the next, a changed constant or the wall clock is caught, and
// each way a run can go wrong has its verdict and a line naming what went wrong.

#include "helpers.hpp"

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/verify/report.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using verify::Verdict;

TEST_CASE("A golden file kept from a run holds the inputs and one output after each", "[verify][runs]") {
  const std::string golden = record_golden(20);
  auto reader = recorder::Reader::open(golden);
  REQUIRE(reader.ok());
  auto outputs = verify::read_topics(*reader, {.topics = {"/imu/filtered"}}, {.topics = {"/imu"}});
  REQUIRE(outputs.ok());
  REQUIRE(outputs->size() == 1);
  const auto& t = outputs->front();
  CHECK(t.type.message_encoding == "json");
  REQUIRE(t.messages.size() == 20);
  for (std::size_t i = 0; i < t.messages.size(); ++i) CHECK(t.messages[i].after_input == verify::input_label("/imu", i));
}

TEST_CASE("The node verifies against its golden file", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(record_golden(20)));
  INFO(v.problem << verify::text_report(v));
  CHECK(v.verdict == Verdict::Same);
  CHECK(v.compared_with_recording);
  REQUIRE(v.against_recording.topics.size() == 1);
  CHECK(v.against_recording.topics[0].expected == 20);
  CHECK(v.against_recording.topics[0].got == 20);
  REQUIRE(v.runs.size() == 1);
  CHECK(v.runs[0].inputs == 20);
  // The private domains of this process's runs are gone, whoever created their topics.
  CHECK(count_shm_entries("cerulion.verify-" + std::to_string(::getpid()) + "-") == 0);
}

TEST_CASE("The node with another constant differs, and the first differing message is named", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(record_golden(10), {"--alpha", "0.3"}));
  CHECK(v.verdict == Verdict::Differ);
  REQUIRE_FALSE(v.against_recording.differences.empty());
  const auto& d = v.against_recording.differences.front();
  CHECK(d.topic == "/imu/filtered");
  CHECK(d.index == 0);
  CHECK(d.after_input == "/imu #0");
  CHECK(d.field.rfind("accel.", 0) == 0);
  CHECK(verify::describe(d).find("/imu/filtered #0 (after /imu #0): field accel.") == 0);
}

TEST_CASE("A tolerance on the fields that moved lets the changed node pass", "[verify][runs]") {
  const std::string golden = record_golden(10);
  auto o = imu_verify_options(golden, {"--alpha", "0.2000000001"});
  CHECK(verify::verify(o).verdict == Verdict::Differ);
  o.compare.tolerances = {*verify::parse_tolerance("*=1e-6")};
  CHECK(verify::verify(o).verdict == Verdict::Same);
}

TEST_CASE("A node that reads the wall clock is caught by repeated runs", "[verify][runs]") {
  auto o = imu_verify_options(write_imu_inputs(10), {"--wall-clock"});
  o.repeat = 5;
  const auto v = verify::verify(o);
  CHECK(v.verdict == Verdict::Differ);
  CHECK_FALSE(v.compared_with_recording);
  REQUIRE(v.between_runs.size() == 4);
  REQUIRE_FALSE(v.between_runs[0].differences.empty());
  CHECK(v.between_runs[0].differences[0].field == "stamp_ns");
  CHECK(verify::text_report(v).find("run 2 differs from run 1 (non-determinism)") != std::string::npos);
}

TEST_CASE("A node with a thread race is caught by repeated runs", "[verify][runs]") {
  // Each output holds how far a free-running thread of the node got when it was read: the threads'
  // interleaving, which no two runs repeat across ten outputs.
  auto o = imu_verify_options(write_imu_inputs(10), {"--race"});
  o.repeat = 5;
  const auto v = verify::verify(o);
  INFO(v.problem);
  CHECK(v.verdict == Verdict::Differ);
  REQUIRE(v.between_runs.size() == 4);
  std::size_t differing_runs = 0;
  for (const auto& run : v.between_runs) {
    if (run.differences.empty()) continue;
    ++differing_runs;
    CHECK(run.differences[0].field == "integrator_steps");
  }
  CHECK(differing_runs > 0);
}

TEST_CASE("Repeated runs of the deterministic node agree", "[verify][runs]") {
  auto o = imu_verify_options(write_imu_inputs(10));
  o.repeat = 3;
  const auto v = verify::verify(o);
  INFO(v.problem);
  CHECK(v.verdict == Verdict::Same);
  CHECK(v.between_runs.size() == 2);
}

TEST_CASE("A node that crashes is a command failure naming its signal", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(record_golden(10), {"--crash-after", "3"}));
  CHECK(v.verdict == Verdict::CommandFailed);
  CHECK(v.problem.find("signal 6 (SIGABRT)") != std::string::npos);
  CHECK(v.problem.find("/imu #") != std::string::npos);
}

TEST_CASE("A command that does not exist is a command failure naming it", "[verify][runs]") {
  auto o = imu_verify_options(record_golden(3));
  o.run.command = {"/nonexistent/imu_filter"};
  const auto v = verify::verify(o);
  CHECK(v.verdict == Verdict::CommandFailed);
  INFO(v.problem);
  CHECK(v.problem.find("cannot run '/nonexistent/imu_filter'") != std::string::npos);
  // Named once: the helper that starts it names it already.
  CHECK(v.problem.find("/nonexistent/imu_filter") == v.problem.rfind("/nonexistent/imu_filter"));
}

TEST_CASE("A command that never subscribes to an input is named with the input", "[verify][runs]") {
  auto o = imu_verify_options(record_golden(3));
  o.run.command = {"sleep", "30"};
  o.run.startup_timeout = std::chrono::milliseconds(300);
  const auto v = verify::verify(o);
  CHECK(v.verdict == Verdict::CommandFailed);
  CHECK(v.problem.find("did not subscribe to '/imu'") != std::string::npos);
}

TEST_CASE("A recording without the input cannot serve, and says which topic it lacks", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(write_imu_inputs(5, "/other")));
  CHECK(v.verdict == Verdict::RecordingUnusable);
  CHECK(v.problem.find("no input topic '/imu'") != std::string::npos);
}

TEST_CASE("A recording without the output cannot serve a single run", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(write_imu_inputs(5)));
  CHECK(v.verdict == Verdict::RecordingUnusable);
  CHECK(v.problem.find("no output topic '/imu/filtered'") != std::string::npos);
}

TEST_CASE("A missing or damaged recording cannot serve", "[verify][runs]") {
  CHECK(verify::verify(imu_verify_options(fresh_temp_path("absent.mcap"))).verdict == Verdict::RecordingUnusable);
  const std::string damaged = fresh_temp_path("damaged.mcap");
  std::ofstream(damaged) << "this is not an MCAP file at all";
  const auto v = verify::verify(imu_verify_options(damaged));
  CHECK(v.verdict == Verdict::RecordingUnusable);
  CHECK(v.problem.find(damaged) != std::string::npos);
}

TEST_CASE("An output the command never publishes times out after the input, naming the topic", "[verify][runs]") {
  auto o = imu_verify_options(golden_with_output_renamed(5, "/imu/smoothed"));
  o.run.outputs = {"/imu/smoothed"};
  o.run.output_timeout = std::chrono::milliseconds(300);
  const auto v = verify::verify(o);
  CHECK(v.verdict == Verdict::CommandFailed);
  CHECK(v.problem.find("stopped answering: no message on '/imu/smoothed'") != std::string::npos);
  CHECK(v.problem.find("after input /imu #0") != std::string::npos);
}

TEST_CASE("The reports say the verdict: JSON with every difference, JUnit with a failure per differing topic", "[verify][runs]") {
  const auto v = verify::verify(imu_verify_options(record_golden(5), {"--alpha", "0.5"}));
  REQUIRE(v.verdict == Verdict::Differ);
  const std::string json = verify::json_report(v);
  CHECK(json.find("\"verdict\":\"differ\"") != std::string::npos);
  CHECK(json.find("\"after_input\":\"/imu #0\"") != std::string::npos);
  const std::string junit = verify::junit_report(v, "golden.mcap");
  CHECK(junit.find("<testsuite name=\"golden.mcap\" tests=\"1\" failures=\"1\" errors=\"0\"") != std::string::npos);
  CHECK(junit.find("classname=\"golden_mcap\"") != std::string::npos);
  CHECK(junit.find("<failure message=\"/imu/filtered: 5 expected, 5 got, 5 differ\">") != std::string::npos);
}

TEST_CASE("With --clock each input's log time comes first, and a node stamped by it is deterministic", "[verify][runs]") {
  auto o = imu_verify_options(write_imu_inputs(5), {"--clock", "/clock"});
  o.run.clock_topic = "/clock";
  o.repeat = 3;
  o.keep = fresh_temp_path("clocked.mcap");
  o.run.settle = std::chrono::milliseconds(300);
  const auto v = verify::verify(o);
  INFO(v.problem << verify::text_report(v));
  CHECK(v.verdict == Verdict::Same);
  check_last_output_stamped(o.keep, 5);
}

TEST_CASE("A command that stops taking its inputs is a command failure, never a hang", "[verify][runs]") {
  // No recorded outputs: each input waits for quiet, and then for room in the input's ring.
  auto o = imu_verify_options(write_imu_inputs(40), {"--stall-after", "2"});
  o.repeat = 2;
  o.run.settle = std::chrono::milliseconds(10);
  o.run.output_timeout = std::chrono::milliseconds(500);
  const auto v = verify::verify(o);
  CHECK(v.verdict == Verdict::CommandFailed);
  CHECK(v.problem.find("took no input") != std::string::npos);
  CHECK(v.problem.find("/imu") != std::string::npos);
}
