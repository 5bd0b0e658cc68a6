// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/report.hpp"

#include <nlohmann/json.hpp>

#include "cerulion/core/detail/markup.hpp"

namespace cerulion::verify {
namespace {

using OrderedJson = nlohmann::ordered_json;
using cerulion::detail::markup_escaped;

std::string report_plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string topic_line(const TopicComparison& t) {
  std::string verdict = t.differing == 0 ? std::string(t.type_differs ? "" : "same") : report_plural(t.differing, "differs", "differ");
  if (t.type_differs) verdict += std::string(verdict.empty() ? "" : ", ") + "its type differs";
  return t.topic + ": " + std::to_string(t.expected) + " expected, " + std::to_string(t.got) + " got, " + verdict;
}

// "" is "not there": null (docs/json.md).
OrderedJson text_or_null(const std::string& text) { return text.empty() ? OrderedJson(nullptr) : OrderedJson(text); }

OrderedJson difference_json(const Difference& d) {
  return {{"topic", d.topic},
          {"index", d.kind == DifferenceKind::Type ? OrderedJson(nullptr) : OrderedJson(d.index)},
          {"after_input", text_or_null(d.after_input)},
          {"kind", to_string(d.kind)},
          {"field", text_or_null(d.field)},
          {"expected", d.expected},
          {"got", d.got},
          {"expected_count", d.kind == DifferenceKind::Missing || d.kind == DifferenceKind::Extra ? OrderedJson(d.expected_count) : OrderedJson(nullptr)},
          {"got_count", d.kind == DifferenceKind::Missing || d.kind == DifferenceKind::Extra ? OrderedJson(d.got_count) : OrderedJson(nullptr)}};
}

OrderedJson comparison_json(const Comparison& c) {
  OrderedJson j;
  j["same"] = c.same();
  j["total_differences"] = c.total_differences;
  auto topics = OrderedJson::array();
  for (const auto& t : c.topics) {
    topics.push_back({{"topic", t.topic},
                      {"expected", t.expected},
                      {"got", t.got},
                      {"differing", t.differing},
                      {"type_differs", t.type_differs}});
  }
  j["topics"] = topics;
  auto differences = OrderedJson::array();
  for (const auto& d : c.differences) differences.push_back(difference_json(d));
  j["differences"] = differences;
  return j;
}

// What a report holds may come from anywhere (a command's name, a path): dumped with each byte
// that is not UTF-8 replaced, so that the report is JSON whatever it holds.
std::string json_text(const OrderedJson& j) { return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace); }

// `text` with each byte that is not UTF-8 replaced by U+FFFD, as json_text replaces it.
std::string valid_utf8(std::string_view text) {
  return OrderedJson::parse(json_text(OrderedJson(std::string(text)))).get<std::string>();
}

// Escaped for XML after the bytes that are not UTF-8 are replaced: a JUnit file stays well-formed.
std::string xml_escaped(std::string_view text) { return markup_escaped(valid_utf8(text)); }

// One <testcase>: failed when `failure` is not empty, as an <error> when `error` (the run could
// not judge the outputs) rather than a <failure> (it judged them wrong).
std::string junit_case(std::string_view classname, std::string_view name, double seconds, const std::string& failure,
                       const std::string& details, bool error = false) {
  std::string out = "  <testcase classname=\"" + xml_escaped(classname) + "\" name=\"" + xml_escaped(name) +
                    "\" time=\"" + std::to_string(seconds) + "\"";
  if (failure.empty()) return out + "/>\n";
  const char* element = error ? "error" : "failure";
  out += ">\n    <" + std::string(element) + " message=\"" + xml_escaped(failure) + "\">" + xml_escaped(details) + "</" +
         element + ">\n";
  return out + "  </testcase>\n";
}

// A JUnit classname for a recording's path: viewers split classnames at dots into packages, so
// "golden.mcap" would show as class "mcap" of package "golden".
std::string junit_classname(std::string_view recording) {
  std::string name(recording);
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

// The differences of one topic, as the text of a JUnit failure.
std::string topic_details(const Comparison& c, const std::string& topic, std::size_t shown) {
  std::string out;
  std::size_t n = 0;
  for (const auto& d : c.differences) {
    if (d.topic != topic) continue;
    if (n++ == shown) {
      out += "...\n";
      break;
    }
    out += describe(d) + "\n";
  }
  return out;
}

// What was verified of a damaged recording, one line; "" for a whole one.
std::string damage_line(const Verification& v) {
  if (v.damage.empty()) return {};
  std::string out = "the recording is damaged (";
  for (std::size_t i = 0; i < v.damage.size(); ++i) out += (i ? "; " : "") + v.damage[i];
  out += "): ";
  if (!v.intact_part_only) return out + "nothing was lost, all of it was verified";
  out += "only its intact part was verified, " + std::to_string(v.inputs_verified) + " of its " +
         report_plural(v.recorded_inputs, "input", "inputs") + " (logged before " + std::to_string(v.intact_before) +
         " ns)";
  if (v.outputs_beyond > 0) {
    out += "; " + report_plural(v.outputs_beyond, "output", "outputs") + " after its last one not compared";
  }
  return out;
}

}  // namespace

std::string describe(const Difference& d) {
  if (d.kind == DifferenceKind::Type) return d.topic + ": " + d.field + ": expected " + d.expected + ", got " + d.got;
  if (d.kind == DifferenceKind::Missing || d.kind == DifferenceKind::Extra) {
    // "after /in #1: 2 messages on /out, 1 expected (extra: ...)": counted after the one input.
    const bool missing = d.kind == DifferenceKind::Missing;
    return (d.after_input.empty() ? std::string() : "after " + d.after_input + ": ") +
           report_plural(d.got_count, "message", "messages") + " on " + d.topic + ", " +
           std::to_string(d.expected_count) + " expected (" + (missing ? "missing: " + d.expected : "extra: " + d.got) + ")";
  }
  std::string out = d.topic + " #" + std::to_string(d.index);
  if (!d.after_input.empty()) out += " (after " + d.after_input + ")";
  if (d.kind == DifferenceKind::Undecodable) {
    return out + ": " + (d.in_expected ? "the expected message" : "the message") + " is not json: expected " +
           d.expected + ", got " + d.got;
  }
  if (!d.field.empty()) out += ": " + std::string(d.kind == DifferenceKind::Field ? "field " : "") + d.field;
  return out + ": expected " + d.expected + ", got " + d.got;
}

std::string text_report(const Comparison& c, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < c.differences.size() && i < shown; ++i) out += describe(c.differences[i]) + "\n";
  if (c.total_differences > shown) {
    out += "... and " + report_plural(c.total_differences - shown, "more difference", "more differences") + "\n";
  }
  for (const auto& t : c.topics) out += topic_line(t) + "\n";
  return out;
}

std::string json_report(const Comparison& c) { return json_text(comparison_json(c)); }

const char* to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::Same: return "same";
    case Verdict::Differ: return "differ";
    case Verdict::CommandFailed: return "command failed";
    case Verdict::RecordingUnusable: return "recording unusable";
    case Verdict::Interrupted: return "interrupted";
  }
  return "?";
}

std::string text_report(const Verification& v, std::size_t shown) {
  std::string out;
  if (!v.problem.empty()) out += v.problem + "\n";
  if (v.compared_with_recording && !v.runs.empty()) {
    out += v.against_recording.same() ? "outputs are the recorded ones\n" : "outputs differ from the recording:\n";
    out += text_report(v.against_recording, shown);
  }
  for (std::size_t i = 0; i < v.between_runs.size(); ++i) {
    const auto& c = v.between_runs[i];
    if (c.same()) continue;
    out += "run " + std::to_string(i + 2) + " differs from run 1 (non-determinism):\n" + text_report(c, shown);
  }
  std::size_t differing_runs = 0;
  for (const auto& c : v.between_runs) differing_runs += c.same() ? 0 : 1;
  if (!v.between_runs.empty() && differing_runs == 0) {
    out += "all " + std::to_string(v.between_runs.size() + 1) + " runs gave the same outputs\n";
  }
  if (const auto damage = damage_line(v); !damage.empty()) out += damage + "\n";
  out += std::string("verdict: ") + to_string(v.verdict) +
         (v.intact_part_only ? " (on the intact part of a damaged recording)" : "") + "\n";
  return out;
}

std::string json_report(const Verification& v) {
  OrderedJson j;
  j["recording"] = v.recording;
  j["inputs"] = v.inputs;
  j["outputs"] = v.outputs;
  j["verdict"] = to_string(v.verdict);
  j["problem"] = text_or_null(v.problem);
  j["compared_with_recording"] = v.compared_with_recording;
  j["against_recording"] = v.compared_with_recording ? comparison_json(v.against_recording) : OrderedJson(nullptr);
  auto runs = OrderedJson::array();
  for (std::size_t i = 0; i < v.runs.size(); ++i) {
    const auto& r = v.runs[i];
    OrderedJson run = {{"run", i + 1},           {"end", to_string(r.end)},    {"problem", text_or_null(r.problem)},
                       {"inputs", r.inputs},     {"outputs", r.outputs},       {"elapsed_s", static_cast<double>(r.elapsed_ns) / 1e9},
                       {"feeding_s", static_cast<double>(r.feeding_ns) / 1e9}};
    run["against_first_run"] = i == 0 || i - 1 >= v.between_runs.size() ? OrderedJson(nullptr) : comparison_json(v.between_runs[i - 1]);
    runs.push_back(run);
  }
  j["runs"] = runs;
  j["damage"] = v.damage;
  j["intact_part"] = v.intact_part_only ? OrderedJson{{"before_log_time_ns", v.intact_before},
                                                      {"inputs", v.inputs_verified},
                                                      {"recorded_inputs", v.recorded_inputs},
                                                      {"outputs_not_compared", v.outputs_beyond}}
                                        : OrderedJson(nullptr);
  return json_text(j);
}

std::string junit_report(const Verification& v, std::string_view suite) {
  std::string cases;
  std::size_t tests = 0, failures = 0, errors = 0;
  const double seconds = v.runs.empty() ? 0.0 : static_cast<double>(v.runs[0].elapsed_ns) / 1e9;
  const std::string classname = junit_classname(suite);
  auto add = [&](std::string_view name, double s, const std::string& failure, const std::string& details, bool error = false) {
    ++tests;
    if (!failure.empty()) ++(error ? errors : failures);
    cases += junit_case(classname, name, s, failure, details, error);
  };
  if (!v.problem.empty() || v.runs.empty()) {
    // The command failed, or the recording could not serve: nothing was judged.
    const bool error = v.verdict != Verdict::Differ && v.verdict != Verdict::Same;
    add("run", seconds, v.problem.empty() ? to_string(v.verdict) : v.problem, v.problem, error);
  }
  if (const auto damage = damage_line(v); !damage.empty() && v.verdict != Verdict::RecordingUnusable) {
    // Passed or failed as its outputs say; what was left out is on record as a skipped case.
    ++tests;
    cases += "  <testcase classname=\"" + xml_escaped(suite) + "\" name=\"recording\" time=\"0\">\n    <skipped message=\"" +
             xml_escaped(damage) + "\"/>\n  </testcase>\n";
  }
  if (v.compared_with_recording) {
    for (const auto& t : v.against_recording.topics) {
      add(t.topic, seconds, t.same() ? "" : topic_line(t), topic_details(v.against_recording, t.topic, 20));
    }
  }
  for (std::size_t i = 0; i < v.between_runs.size(); ++i) {
    const auto& c = v.between_runs[i];
    const double s = i + 1 < v.runs.size() ? static_cast<double>(v.runs[i + 1].elapsed_ns) / 1e9 : 0.0;
    std::string details;
    for (const auto& t : c.topics) details += t.same() ? "" : topic_details(c, t.topic, 20);
    add("run " + std::to_string(i + 2) + " is run 1", s,
        c.same() ? "" : "run " + std::to_string(i + 2) + " differs from run 1 (non-determinism)", details);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"" + xml_escaped(suite) + "\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
         "\">\n" + cases +
         "</testsuite>\n";
}

}  // namespace cerulion::verify
