// SPDX-License-Identifier: Apache-2.0
// `cerulion bench`: the latency campaign of benchmark-method.md over every available lane, as
// tables, JSON, Markdown and an HTML chart. Each repetition runs `cerulion ping` (and
// its pong) in fresh processes; the campaign and the reports are the bench library's.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "bench_progress.hpp"
#include "cerulion/bench/baseline.hpp"
#include "cerulion/bench/campaign.hpp"
#include "cerulion/bench/ping_runner.hpp"
#include "cerulion/bench/report.hpp"
#include "cerulion/measurement/transport.hpp"
#include "command.hpp"
#include "output_file.hpp"
#include "ping_flashback.hpp"

namespace cerulion::cli {
namespace {

struct BenchArgs {
  std::string lanes;
  bool full = false;
  std::string sizes;
  unsigned runs = 0;
  std::uint64_t samples = 0;
  std::uint64_t warmup = 100;
  double rate = 100;
  std::string wait = "adaptive";
  bool no_flashback = false;
  std::string headline_size = "64";
  std::string json, markdown, html, samples_dir, baseline, from;
  double tolerance = 1.25;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bench::CampaignSettings settings_from(const BenchArgs& a) {
  bench::CampaignSettings s = a.full ? bench::full_campaign() : bench::CampaignSettings{};
  if (!a.sizes.empty()) {
    s.sizes.clear();
    for (const auto& item : split_list(a.sizes)) {
      auto size = parse_size(item);
      if (!size || *size < measurement::kStampBytes) {
        throw Exit{kExitUsage, fmt::format("--sizes: '{}' is not a size of at least 8 bytes (e.g. 64,4KiB,1MiB)", item)};
      }
      s.sizes.push_back(*size);
    }
    if (s.sizes.empty()) throw Exit{kExitUsage, "--sizes: no size given"};
  }
  if (a.runs) s.repetitions = a.runs;
  if (a.samples) s.samples = a.samples;
  s.warmup = a.warmup;
  s.rate_hz = a.rate;
  s.wait = a.wait;
  s.flashback = !a.no_flashback;
  auto headline = parse_size(a.headline_size);
  if (!headline) throw Exit{kExitUsage, fmt::format("--headline-size: '{}' is not a size", a.headline_size)};
  s.headline_size = *headline;
  if (std::find(s.sizes.begin(), s.sizes.end(), s.headline_size) == s.sizes.end()) s.headline_size = s.sizes.front();
  s.samples_dir = a.samples_dir;
  return s;
}

// Lanes with their availability in this build and on this machine. Where lanes are named, only
// theirs are looked at: a peer lane's transport loads its library (Fast DDS, iceoryx).
std::vector<bench::Lane> available_lanes(const std::vector<std::string>& wanted) {
  auto lanes = bench::known_lanes();
  for (auto& lane : lanes) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), lane.name) == wanted.end()) continue;
    const auto transport = measurement::transport_info(lane.transport);
    if (!transport) {
      lane.available = false;
      lane.reason = "this build has no " + lane.transport + " transport";
    } else if (!transport->available) {
      lane.available = false;
      lane.reason = transport->reason;
    }
  }
  return lanes;
}

std::string read_text_file(const std::string& path, const char* option) {
  // A FIFO would block for ever and a directory reads as nothing: only a file is read.
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (!ec && type != std::filesystem::file_type::regular) {
    throw Exit{kExitUsage, fmt::format("{} '{}': not a regular file", option, path)};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Exit{kExitUsage, fmt::format("{} '{}': cannot read it: {}", option, path, std::strerror(errno))};
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Exit{kExitUsage, fmt::format("{} '{}': cannot read it: {}", option, path, std::strerror(errno))};
  return ss.str();
}

// A bench JSON read back, or a usage error naming the option and why the file is not one.
bench::SavedReport read_report(const std::string& path, const char* option) {
  auto report = bench::read_json_report(read_text_file(path, option));
  if (!report) throw Exit{kExitUsage, fmt::format("{} '{}': {}", option, path, report.message())};
  return std::move(*report);
}

// The tables on stdout and the files asked for; the same for a campaign just run and one read back.
void write_reports(const BenchArgs& a, const bench::CampaignResult& result, const bench::Machine& machine,
                   const bench::Build& build) {
  fmt::print("{}", bench::text_report(result, machine, build));
  std::fflush(stdout);
  if (!a.json.empty()) write_output_file(a.json, bench::json_report(result, machine, build).dump(2) + "\n", "the JSON");
  if (!a.markdown.empty()) write_output_file(a.markdown, bench::markdown_report(result, machine, build), "the Markdown");
  if (!a.html.empty()) write_output_file(a.html, bench::html_report(result, machine, build), "the HTML page");
}

// Every cell against the baseline's; exit 1 when a cerulion lane got slower, fails, or kept only a
// lower rate than before.
void check_baseline(const BenchArgs& a, const bench::CampaignResult& current, const bench::CampaignResult& baseline) {
  const auto compared = bench::compare_with_baseline(current, baseline, a.tolerance);
  fmt::print("Compared with {} (tolerance {:.2f}x):\n", a.baseline, a.tolerance);
  for (const auto& c : compared.cells) fmt::print("  {}\n", bench::describe(c, a.tolerance));
  if (compared.cells.empty()) fmt::print("  no cell of this run is in the baseline\n");
  if (compared.regressed()) {
    throw Exit{kExitFailure, "against the baseline: " + bench::regression_summary(compared, a.tolerance)};
  }
}

// `--from`: the reports of a saved campaign, without measuring.
void render_saved(const BenchArgs& a, bool headline_given) {
  auto saved = read_report(a.from, "--from");
  if (headline_given) {
    auto headline = parse_size(a.headline_size);
    if (!headline) throw Exit{kExitUsage, fmt::format("--headline-size: '{}' is not a size", a.headline_size)};
    const auto& sizes = saved.result.settings.sizes;
    if (std::find(sizes.begin(), sizes.end(), *headline) == sizes.end()) {
      throw Exit{kExitUsage, fmt::format("--headline-size: {} was not measured in '{}'", a.headline_size, a.from)};
    }
    saved.result.settings.headline_size = *headline;
  }
  std::optional<bench::SavedReport> baseline;
  if (!a.baseline.empty()) baseline = read_report(a.baseline, "--baseline");
  write_reports(a, saved.result, saved.machine, saved.build);
  if (baseline) check_baseline(a, saved.result, baseline->result);
}

void run_bench(const BenchArgs& a) {
  auto settings = settings_from(a);
  auto wanted = split_list(a.lanes);
  auto lanes = bench::resolve_lanes(wanted, available_lanes(wanted));
  if (!lanes) throw Exit{kExitUsage, "--lanes: " + lanes.message()};
  if (!wanted.empty()) {
    for (const auto& lane : *lanes) {
      if (!lane.available) throw Exit{kExitUsage, fmt::format("lane '{}' is unavailable: {}", lane.name, lane.reason)};
    }
  }
  // Read before an hour of measuring, not after.
  std::optional<bench::SavedReport> baseline;
  if (!a.baseline.empty()) baseline = read_report(a.baseline, "--baseline");
  if (!settings.samples_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(settings.samples_dir, ec);
    if (ec) throw Exit{kExitFailure, fmt::format("--samples-dir '{}': {}", settings.samples_dir, ec.message())};
  }
  install_stop_handlers();
  std::size_t available = 0;
  for (const auto& lane : *lanes) available += lane.available;
  fmt::print(stderr, "bench: {}\n", bench::describe_plan(bench::plan_campaign(settings, *lanes), settings, available));
  // How busy the machine is, read before the campaign disturbs it.
  auto machine = bench::describe_machine();
  // The floor runs where the workers will: ping's default pinning.
  const auto cpus = measurement::parse_cpu_plan("auto");
  machine.load = bench::check_machine_load(cpus ? *cpus : measurement::CpuPlan{});
  fmt::print(stderr, "bench: machine: {}\n", bench::describe_load(machine.load, false));
  if (machine.load.busy) {
    fmt::print(stderr,
               "bench: warning: this machine is busy ({}): cells may skip slots, fall back to lower rates or fail, and "
               "the figures will be the other work's as much as cerulion's\n",
               machine.load.why);
  }
  std::fflush(stderr);
  bench::PingRunner runner({.domain = globals().domain, .cancel = stop_flag()});
  ProgressDisplay progress;
  auto result = bench::run_campaign(settings, *lanes, [&](const bench::RepetitionRequest& r) { return runner.run(r); },
                                    [&](const bench::Progress& p) { progress.show(p); });
  progress.finish();
  if (auto after = bench::read_load_average()) machine.load.after = *after;
  // A ping killed before it removed its keeper's store leaves scratch, not evidence.
  (void)remove_orphaned_ping_stores(globals().domain);
  const bench::Build build{CERULION_VERSION, build_commit()};
  // Interrupted: the tables and files hold the cells finished before, said as such.
  write_reports(a, result, machine, build);
  if (result.interrupted) {
    throw Exit{stop_exit_code(), fmt::format("bench: interrupted; the tables hold the {} finished", counted(result.cells.size(), "cell"))};
  }
  if (machine.load.busy) fmt::print(stderr, "bench: the machine was busy: {}\n", machine.load.why);
  if (baseline) check_baseline(a, result, baseline->result);
  // A lane asked for that measured nothing is a failed campaign, whatever the tables show.
  if (const auto empty = bench::lanes_without_results(result); !empty.empty()) {
    std::string lanes;
    for (const auto& cell : empty) lanes += (lanes.empty() ? "" : ", ") + cell.lane;
    throw Exit{kExitFailure, fmt::format("bench: {} measured nothing: every cell failed ({} {}: {})",
                                         empty.size() == 1 ? "lane " + lanes : "lanes " + lanes, empty.front().lane,
                                         bench::size_label(empty.front().size), empty.front().reason)};
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Run the latency campaign (cerulion against Fast DDS and iceoryx)");
  cmd->footer(
      "Each lane x size cell: repetitions in fresh processes of warm-up then round trips on a 100 Hz slot grid\n"
      "(every lane at the default sizes: 21 cells x 3 x 600 round trips, about 7 min; bench prints its plan first);\n"
      "median = median of the repetition medians, p99 pooled (quoted with at least 20 samples beyond it). A cell\n"
      "skipping over 1 % of its slots falls back to 50 then 20 Hz, then fails. Lanes: native-multi,\n"
      "native-multi-lockstep, native-single (flashback on), fastdds-multi, fastdds-single, iceoryx-multi (WaitSet),\n"
      "iceoryx-multi-poll (busy poll).\n"
      "Examples:\n"
      "  cerulion bench\n"
      "  cerulion bench --lanes native-multi,native-single --sizes 64,1MiB --json run.json --html run.html\n"
      "  cerulion bench --baseline run.json --tolerance 1.2\n"
      "  cerulion bench --from run.json --html run.html");
  // The lanes as the type's choices: --help lists them and the completions offer them.
  std::string lane_names;
  for (const auto& lane : bench::known_lanes()) lane_names += (lane_names.empty() ? "" : ",") + lane.name;
  cmd->add_option("--lanes", a->lanes, "Comma-separated lanes (default: every available one)")->type_name("{" + lane_names + "}");
  cmd->add_flag("--full", a->full, "The full campaign: 10 sizes from 64 B to 16 MiB, 5 x 2000 round trips");
  cmd->add_option("--sizes", a->sizes, "Comma-separated payload sizes (default 64,1MiB,16MiB)");
  cmd->add_option("--runs", a->runs, "Repetitions per cell (default 3; 5 with --full)")->check(count_in(1, 100));
  cmd->add_option("--samples", a->samples, "Round trips per repetition (default 500; 2000 with --full)")
      ->check(count_in(1, 10'000'000));
  cmd->add_option("--warmup", a->warmup, "Round trips before measuring (default 100)")->check(count_in(0, 10'000'000));
  cmd->add_option("--rate", a->rate, "Nominal rate in Hz (default 100)")->check(number_in(0.1, 100000, "a rate in Hz"));
  cmd->add_option("--wait", a->wait, "Wait strategy of the native lanes")->check(CLI::IsMember({"adaptive", "spin", "block"}));
  cmd->add_flag("--no-flashback", a->no_flashback, "No flashback keeper on the native lanes");
  cmd->add_option("--headline-size", a->headline_size, "Payload of the headline table and chart (default 64)");
  cmd->add_option("--json", a->json, "Write every cell as JSON to FILE");
  cmd->add_option("--markdown,--md", a->markdown, "Write the tables as Markdown to FILE");
  cmd->add_option("--html", a->html, "Write a self-contained HTML page with the charts to FILE");
  cmd->add_option("--samples-dir", a->samples_dir, "Keep raw round trips (u64 ns, little-endian), one file per cell and repetition");
  cmd->add_option("--baseline", a->baseline,
                  "Compare with an earlier run's --json FILE; exit 1 if a cerulion lane got slower, fails, or kept only a lower rate");
  cmd->add_option("--tolerance", a->tolerance, "Slowdown allowed against --baseline (default 1.25)")->check(number_in(1, 1000, "a slowdown factor"));
  cmd->add_option("--from", a->from, "Render the reports (and --baseline) of a saved --json FILE instead of measuring");
  cmd->callback([a, cmd] {
    if (a->from.empty()) return run_bench(*a);
    for (const char* name : {"--lanes", "--full", "--sizes", "--runs", "--samples", "--warmup", "--rate", "--wait",
                             "--no-flashback", "--samples-dir"}) {
      if (cmd->get_option(name)->count() > 0) {
        throw Exit{kExitUsage, fmt::format("--from renders a saved campaign: {} would change what is measured", name)};
      }
    }
    render_saved(*a, cmd->get_option("--headline-size")->count() > 0);
  });
}

}  // namespace cerulion::cli
