// SPDX-License-Identifier: Apache-2.0
// `cerulion verify` and `cerulion diff` through the real binary: the exit codes a CI system reads,
// the reports it keeps, the first difference named, and Ctrl-C in the middle of a run.

#include "helpers.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "xml.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

std::vector<std::string> verify_args(const std::string& recording, std::vector<std::string> extra = {},
                                     std::vector<std::string> node_args = {}) {
  std::vector<std::string> args = {"verify", recording, "--input", "/imu", "--output", "/imu/filtered"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--");
  for (auto& a : imu_filter(std::move(node_args))) args.push_back(std::move(a));
  return args;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("verify exits 0 against a golden file and writes its JSON and JUnit reports", "[verify][cli]") {
  const std::string golden = record_golden(10);
  const std::string json = fresh_temp_path("report.json");
  const std::string junit = fresh_temp_path("report.xml");
  auto r = run_cerulion(verify_args(golden, {"--json", json, "--junit", junit}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("outputs are the recorded ones") != std::string::npos);
  CHECK(r.out.find("verdict: same") != std::string::npos);
  const auto report = nlohmann::json::parse(read_whole(json));
  CHECK(report["verdict"] == "same");
  CHECK(report["runs"][0]["inputs"] == 10);
  CHECK(read_whole(junit).find("failures=\"0\"") != std::string::npos);
  CHECK(xml_problem(read_whole(junit)) == "");
}

TEST_CASE("verify --junit writes well-formed XML whether the outputs differ or the command failed", "[verify][cli]") {
  const std::string golden = record_golden(5);
  const std::string differ_file = fresh_temp_path("differ.xml");
  auto differ = run_cerulion(verify_args(golden, {"--junit", differ_file}, {"--alpha", "0.7"}));
  CHECK(differ.exit_code == 1);
  const std::string differ_xml = read_whole(differ_file);
  INFO(differ_xml);
  CHECK(xml_problem(differ_xml) == "");
  CHECK(differ_xml.find("<failure message=\"/imu/filtered: 5 expected, 5 got, 5 differ\">") != std::string::npos);
  const std::string crash_file = fresh_temp_path("crash.xml");
  auto crashed = run_cerulion(verify_args(golden, {"--junit", crash_file}, {"--crash-after", "2"}));
  CHECK(crashed.exit_code == 3);
  const std::string crash_xml = read_whole(crash_file);
  INFO(crash_xml);
  CHECK(xml_problem(crash_xml) == "");
  CHECK(crash_xml.find("SIGABRT") != std::string::npos);
  // A run that could not judge the outputs is an error, not a failure; viewers split classnames
  // at dots, so the recording's name has none.
  CHECK(crash_xml.find("<error message=") != std::string::npos);
  CHECK(crash_xml.find("errors=\"1\"") != std::string::npos);
  CHECK(crash_xml.find("failures=\"0\"") != std::string::npos);
  CHECK(crash_xml.find("classname=\"") != std::string::npos);
  CHECK(crash_xml.find("golden.mcap\" name=") == std::string::npos);
}

TEST_CASE("verify says what --keep wrote, warns of a tolerance that matches no field, and keeps its own reading quiet",
          "[verify][cli]") {
  const std::string golden = record_golden(5);
  auto tolerated = run_cerulion(verify_args(golden, {"--tolerance", "acel.*=1e-9", "--tolerance", "accel.*=1e-9"}));
  INFO(tolerated.out << tolerated.err);
  CHECK(tolerated.exit_code == 0);
  CHECK(tolerated.err.find("warning: --tolerance 'acel.*' matches no number field") != std::string::npos);
  CHECK(tolerated.err.find("'accel.*'") == std::string::npos);
  // What the taps read is verify's own business, not a line of the user's log.
  CHECK(tolerated.err.find("reading '") == std::string::npos);

  const std::string kept = fresh_temp_path("kept.mcap");
  auto keep = run_cerulion(verify_args(write_imu_inputs(4), {"--keep", kept, "--settle", "300ms"}));
  INFO(keep.out << keep.err);
  CHECK(keep.exit_code == 0);
  CHECK(keep.err.find("wrote " + kept + ": run 1's 4 inputs and 4 outputs") != std::string::npos);
}

TEST_CASE("verify exits 1 and names the first differing message", "[verify][cli]") {
  auto r = run_cerulion(verify_args(record_golden(10), {}, {"--alpha", "0.7"}));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("/imu/filtered #0 (after /imu #0): field accel.") != std::string::npos);
  CHECK(r.out.find("/imu/filtered: 10 expected, 10 got, 10 differ") != std::string::npos);
}

TEST_CASE("verify exits 3 when the command crashes or does not exist", "[verify][cli]") {
  const std::string golden = record_golden(10);
  auto crashed = run_cerulion(verify_args(golden, {}, {"--crash-after", "2"}));
  CHECK(crashed.exit_code == 3);
  CHECK(crashed.err.find("SIGABRT") != std::string::npos);
  auto missing = run_cerulion({"verify", golden, "--input", "/imu", "--output", "/imu/filtered", "--", "/nonexistent/node"});
  CHECK(missing.exit_code == 3);
  CHECK(missing.err.find("/nonexistent/node") != std::string::npos);
}

TEST_CASE("verify exits 4 for a recording without the input, a missing file and a damaged one", "[verify][cli]") {
  auto r = run_cerulion(verify_args(write_imu_inputs(3, "/other")));
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("no input topic '/imu'") != std::string::npos);
  CHECK(run_cerulion(verify_args(fresh_temp_path("absent.mcap"))).exit_code == 4);
  // Outputs listed with a comma: the second is not in the golden file.
  auto absent = run_cerulion({"verify", record_golden(3), "--input", "/imu", "--output", "/imu/filtered,/absent", "--",
                              VERIFY_IMU_FILTER});
  CHECK(absent.exit_code == 4);
  CHECK(absent.err.find("no output topic '/absent'") != std::string::npos);
  const std::string damaged = fresh_temp_path("damaged.mcap");
  std::ofstream(damaged) << "not MCAP";
  auto broken = run_cerulion(verify_args(damaged));
  CHECK(broken.exit_code == 4);
  // One line, naming the file.
  CHECK(broken.err.find(damaged) != std::string::npos);
  CHECK(std::count(broken.err.begin(), broken.err.end(), '\n') == 1);
}

TEST_CASE("verify exits 3 naming the output the command never publishes and the input it came after, without hanging",
          "[verify][cli]") {
  const std::string golden = golden_with_output_renamed(5, "/imu/smoothed");
  auto r = run_cerulion({"verify", golden, "--input", "/imu", "--output", "/imu/smoothed", "--output-timeout", "0.3", "--",
                         VERIFY_IMU_FILTER},
                        {}, std::chrono::seconds(60));
  INFO(r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no message on '/imu/smoothed' within 0.3 s after input /imu #0") != std::string::npos);
}

TEST_CASE("verify exits 3 for a command that hangs after an input, saying where with one count and how many inputs were not fed",
          "[verify][cli]") {
  const std::string golden = record_golden(8);
  auto r = run_cerulion(verify_args(golden, {"--output-timeout", "0.5"}, {"--stall-after", "3"}), {},
                        std::chrono::seconds(60));
  INFO(r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("the command stopped answering: no message on '/imu/filtered' within 0.5 s after input /imu #3 "
                   "(the recording has 4 by then, 3 came); 4 inputs not fed") != std::string::npos);
  // One line, and the inputs never fed are not reported as missing outputs.
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.find("missing") == std::string::npos);
  const std::string json_path = fresh_temp_path("hung.json");
  auto j = run_cerulion(verify_args(golden, {"--output-timeout", "0.5", "--json", json_path}, {"--stall-after", "3"}), {},
                        std::chrono::seconds(60));
  CHECK(j.exit_code == 3);
  const auto report = nlohmann::json::parse(read_whole(json_path));
  CHECK(report["runs"][0]["outputs"] == 3);
  CHECK(report["runs"][0]["inputs"] == 4);
}

TEST_CASE("verify --repeat 5 exits 1 for a node that reads the wall clock, saying which runs differ from the first",
          "[verify][cli]") {
  auto r = run_cerulion(verify_args(write_imu_inputs(5), {"--repeat", "5"}, {"--wall-clock"}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("run 2 differs from run 1 (non-determinism)") != std::string::npos);
  CHECK(r.out.find("run 5 differs from run 1 (non-determinism)") != std::string::npos);
  CHECK(r.out.find("field stamp_ns") != std::string::npos);
  CHECK(r.out.find("verdict: differ") != std::string::npos);
}

TEST_CASE("verify --clock publishes each input's log time before it, so a node stamped by it verifies against its golden file",
          "[verify][cli]") {
  const std::string golden = fresh_temp_path("golden-clocked.mcap");
  auto kept = run_cerulion(verify_args(write_imu_inputs(5), {"--clock", "/clock", "--settle", "300ms", "--keep", golden},
                                       {"--clock", "/clock"}));
  INFO(kept.out << kept.err);
  REQUIRE(kept.exit_code == 0);
  auto again = run_cerulion(verify_args(golden, {"--clock", "/clock", "--repeat", "2"}, {"--clock", "/clock"}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("/imu/filtered: 5 expected, 5 got, same") != std::string::npos);
  // The last output is stamped with the last input's log time, as the recording has it.
  check_last_output_stamped(golden, 5);
}

TEST_CASE("verify exits 2 for a usage error, with one line", "[verify][cli]") {
  const std::string golden = record_golden(3);
  auto no_command = run_cerulion({"verify", golden, "--input", "/imu", "--output", "/imu/filtered"});
  CHECK(no_command.exit_code == 2);
  CHECK(no_command.err.find("after --") != std::string::npos);
  auto bad_tolerance = run_cerulion(verify_args(golden, {"--tolerance", "x=much"}));
  CHECK(bad_tolerance.exit_code == 2);
  CHECK(bad_tolerance.err.find("x=much") != std::string::npos);
  CHECK(run_cerulion(verify_args(golden, {"--repeat", "0"})).exit_code == 2);
}

TEST_CASE("verify takes topics as a list after one flag, as repeated flags and as a comma list, and passes the command's own options on untouched",
          "[verify][cli]") {
  // Two input topics: the node reads a tick on /tick before each /imu (its --clock option, which
  // is verify's option's name too: after --, it must reach the node, or the node never subscribes
  // to /tick and the run exits 3).
  const std::string inputs = write_imu_inputs_with_clock(4, "/tick");
  const std::string golden = fresh_temp_path("golden-clock.mcap");
  auto listed = run_cerulion({"verify", inputs, "--input", "/imu", "/tick", "--output", "/imu/filtered", "--settle", "300ms",
                              "--keep", golden, "--", VERIFY_IMU_FILTER, "--clock", "/tick"});
  INFO(listed.out << listed.err);
  REQUIRE(listed.exit_code == 0);
  auto repeated = run_cerulion({"verify", golden, "--input", "/tick", "--input", "/imu", "--output", "/imu/filtered", "--",
                                VERIFY_IMU_FILTER, "--clock", "/tick"});
  INFO(repeated.out << repeated.err);
  CHECK(repeated.exit_code == 0);
  CHECK(repeated.out.find("/imu/filtered: 4 expected, 4 got, same") != std::string::npos);
  // A list right before --, the node's options after it: --alpha reaches the node (other outputs).
  auto commas = run_cerulion({"verify", golden, "--input", "/imu,/tick", "--output", "/imu/filtered", "/absent", "--",
                              VERIFY_IMU_FILTER, "--clock", "/tick", "--alpha", "0.7"});
  CHECK(commas.exit_code == 4);
  CHECK(commas.err.find("no output topic '/absent'") != std::string::npos);
  auto differ = run_cerulion({"verify", golden, "--input", "/imu,/tick", "--output", "/imu/filtered", "--",
                              VERIFY_IMU_FILTER, "--clock", "/tick", "--alpha", "0.7"});
  INFO(differ.out << differ.err);
  CHECK(differ.exit_code == 1);
  CHECK(differ.out.find("/imu/filtered #0 (after /imu #0): field accel.") != std::string::npos);
  // A word before -- that no option takes is named, never run.
  auto stray = run_cerulion({"verify", golden, "stray", "--input", "/imu", "--output", "/imu/filtered", "--", VERIFY_IMU_FILTER});
  CHECK(stray.exit_code == 2);
  CHECK(stray.err.find("'stray' stands before --") != std::string::npos);
}

TEST_CASE("Ctrl-C during a verify run stops the command, exits 130 and leaves nothing in /dev/shm", "[verify][cli][signals]") {
  // The node answers on /imu/filtered, never on /never: the run waits at the first input.
  const std::string inputs = write_imu_inputs(5);
  BackgroundProcess verify({cerulion_binary(), "verify", inputs, "--input", "/imu", "--output", "/never",
                            "--repeat", "2", "--output-timeout", "60", "--settle", "60s", "--", VERIFY_IMU_FILTER});
  const std::string prefix = "cerulion.verify-" + std::to_string(verify.pid()) + "-";
  REQUIRE(eventually([&] { return count_shm_entries(prefix) >= 2; }));  // /never and the node's topics
  std::vector<pid_t> node;
  REQUIRE(eventually([&] { return (node = child_pids(verify.pid())).size() == 1; }));
  verify.signal(SIGINT);
  const auto r = verify.wait(std::chrono::seconds(30));
  INFO(r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  CHECK(count_shm_entries(prefix) == 0);
  // The node was stopped, not left running on its own.
  CHECK(eventually([&] { return process_gone(node.front()); }, std::chrono::seconds(5)));
}

TEST_CASE("diff exits 0 for a recording and itself, 1 naming the first difference, 4 for a missing file", "[verify][cli][diff]") {
  const std::string golden = record_golden(5);
  auto same = run_cerulion({"diff", golden, golden});
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("/imu/filtered: 5 expected, 5 got, same") != std::string::npos);

  auto o = imu_verify_options(golden, {"--alpha", "0.25"});
  o.keep = fresh_temp_path("other.mcap");
  REQUIRE(verify::verify(o).verdict == verify::Verdict::Differ);
  auto differ = run_cerulion({"diff", golden, o.keep, "--topics", "/imu/filtered"});
  CHECK(differ.exit_code == 1);
  CHECK(differ.out.find("/imu/filtered #0: field accel.") != std::string::npos);
  auto tolerated = run_cerulion({"diff", golden, o.keep, "--topics", "/imu/filtered", "--tolerance", "*=100", "--json"});
  CHECK(tolerated.exit_code == 0);
  CHECK(nlohmann::json::parse(tolerated.out)["same"] == true);

  const std::string absent = fresh_temp_path("absent.mcap");
  auto missing = run_cerulion({"diff", golden, absent});
  CHECK(missing.exit_code == 4);
  // Named once.
  const auto named = missing.err.find(absent);
  CHECK(named != std::string::npos);
  CHECK(missing.err.find(absent, named + 1) == std::string::npos);
}

TEST_CASE("diff exits 1 for the same messages under another encoding or schema, saying so per topic", "[verify][cli][diff]") {
  auto write = [](const std::string& name, const std::string& encoding, bool schema) {
    const std::string path = fresh_temp_path(name);
    auto writer = recorder::Writer::create(path);
    REQUIRE(writer.ok());
    std::uint16_t schema_id = 0;
    if (schema) {
      const std::string text = R"({"type":"object"})";
      auto id = writer->add_schema("Imu", "jsonschema", std::as_bytes(std::span(text)));
      REQUIRE(id.ok());
      schema_id = *id;
    }
    auto channel = writer->add_channel("/imu", encoding, schema_id);
    REQUIRE(channel.ok());
    const std::string payload = R"({"ax":1})";
    REQUIRE(writer->write(*channel, 0, kVerifyFirstLogTime, kVerifyFirstLogTime, std::as_bytes(std::span(payload))).ok());
    REQUIRE(writer->close().ok());
    return path;
  };
  const std::string json = write("json.mcap", "json", true);
  const std::string cbor = write("cbor.mcap", "cbor", false);
  auto r = run_cerulion({"diff", json, cbor});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("/imu: encoding: expected json, got cbor") != std::string::npos);
  CHECK(r.out.find("/imu: schema: expected Imu (jsonschema, 17 bytes), got none") != std::string::npos);
  CHECK(r.out.find("/imu: 1 expected, 1 got, its type differs") != std::string::npos);
  auto as_json = run_cerulion({"diff", json, cbor, "--json"});
  CHECK(as_json.exit_code == 1);
  const auto j = nlohmann::json::parse(as_json.out);
  CHECK(j["topics"][0]["type_differs"] == true);
  CHECK(j["differences"][0]["kind"] == "type");
  CHECK(j["differences"][0]["index"].is_null());
}
