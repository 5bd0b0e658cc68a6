// SPDX-License-Identifier: Apache-2.0
// The reports a CI system reads, whatever the messages and the problem hold: the JUnit XML stays
// well-formed and the JSON stays JSON.

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cerulion/verify/report.hpp"
#include "xml.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace cerulion::verify;

namespace {

std::vector<std::byte> report_test_bytes(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// One json topic with these payloads, each after an input of /in.
TopicMessages report_test_topic(const std::string& topic, const std::vector<std::string>& payloads) {
  TopicMessages t;
  t.topic = topic;
  t.type.message_encoding = "json";
  for (std::size_t n = 0; n < payloads.size(); ++n) {
    t.messages.push_back({n, report_test_bytes(payloads[n]), input_label("/in", n), n + 1});
  }
  return t;
}

}  // namespace

TEST_CASE("The well-formedness check refuses what an XML parser refuses", "[verify][report]") {
  CHECK(xml_problem("<?xml version=\"1.0\"?>\n<a x=\"1\" y='&amp;'><b/>t &lt; &#38;</a>\n").empty());
  for (const char* bad : {"<a><b></a></b>", "<a>", "<a/><b/>", "<a x=1/>", "<a x=\"1\" x=\"2\"/>", "<a>&nbsp;</a>",
                          "<a>x & y</a>", "<a x=\"<\"/>", "<a>\x01</a>", "<a>\xC3</a>", "text", "<a/>text", "<!-- c --><a/>"}) {
    INFO(bad);
    CHECK_FALSE(xml_problem(bad).empty());
  }
}

TEST_CASE("The JUnit report is well-formed XML whatever a problem or a difference holds", "[verify][report]") {
  Verification v;
  v.verdict = Verdict::CommandFailed;
  // A command's name may hold any bytes: here markup, a control character and a byte that is not UTF-8.
  v.problem = "the command 'node <a & \"b\">' exited\x01 early: \xC3\xBC \xFF";
  v.recording = "a&b.mcap";
  v.compared_with_recording = true;
  v.against_recording.topics = {{"/out", 1, 1, 1}};
  v.against_recording.differences = {{DifferenceKind::Field, "/out", 0, "/in #0", "a<b>['c&d']", "\"x<y\"", "\"x&y\"", false}};
  v.against_recording.total_differences = 1;
  v.runs = {{RunEnd::CommandExited, v.problem, 1, 1, 1'000'000, 500'000}};
  const std::string junit = junit_report(v, v.recording);
  INFO(junit);
  CHECK(xml_problem(junit).empty());
  CHECK(junit.find("node &lt;a &amp; &quot;b&quot;&gt;") != std::string::npos);
  CHECK(junit.find("a&amp;b.mcap") != std::string::npos);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(json_report(v)));
  CHECK(j["problem"] == "the command 'node <a & \"b\">' exited\x01 early: \xC3\xBC \xEF\xBF\xBD");
}

TEST_CASE("A missing or extra json message that is long or not UTF-8 is shown cut at a character, and the reports stay valid",
          "[verify][report]") {
  // 100 two-byte characters: a cut at a byte count falls inside one.
  std::string long_text = "{\"s\":\"";
  for (int i = 0; i < 100; ++i) long_text += "\xC3\xBC";
  long_text += "\"}";
  const MessageSet expected = {report_test_topic("/out", {long_text, "{\"s\":\"\xFF\xFE\"}"})};
  const MessageSet got = {report_test_topic("/out", {})};
  const Comparison c = compare(expected, got);
  REQUIRE(c.differences.size() == 2);
  CHECK(c.differences[0].kind == DifferenceKind::Missing);
  CHECK(c.differences[0].expected.rfind("{\"s\":\"\xC3\xBC", 0) == 0);
  CHECK(c.differences[0].expected.size() < long_text.size());
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(json_report(c)));
  CHECK(j["differences"].size() == 2);

  Verification v;
  v.verdict = Verdict::Differ;
  v.compared_with_recording = true;
  v.against_recording = c;
  v.runs = {{RunEnd::Finished, "", 2, 0, 1'000'000, 500'000}};
  const std::string junit = junit_report(v, "golden.mcap");
  INFO(junit);
  CHECK(xml_problem(junit).empty());
  REQUIRE_NOTHROW(j = nlohmann::json::parse(json_report(v)));
  CHECK(j["against_recording"]["differences"].size() == 2);
}
