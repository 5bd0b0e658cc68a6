// SPDX-License-Identifier: Apache-2.0
// `cerulion pong`: the echo side of `cerulion ping` (measurement/responder.hpp does the answering).

#include <fmt/core.h>

#include "cerulion/measurement/responder.hpp"
#include "command.hpp"
#include "cpu_pinning.hpp"

namespace cerulion::cli {

void add_pong_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("pong", "Answer `cerulion ping --peer` round trips (runs until Ctrl-C)");
  cmd->footer(
      "Examples:\n"
      "  cerulion pong &                    # then, from another shell or container sharing /dev/shm:\n"
      "  cerulion ping --peer\n"
      "  cerulion pong --topic /lab/rtt --cpu 3");
  struct Args {
    std::string prefix = measurement::kDefaultPrefix;
    std::string mode;
    std::string wait = "adaptive";
    bool once = false;
    int cpu = -1;
    std::string transport = "native";
    std::string max_size = "64";
    std::uint32_t wait_set = 0;
    std::string topic_ceiling = "1GiB";
    bool alternate = false;
    bool explain_tail = false;
    double cpu_budget_pct = kDefaultWaitCpuBudget * 100;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--topic", args->prefix, "Topic prefix: requests on PREFIX/ping, replies on PREFIX/pong")
      ->capture_default_str();
  cmd->add_option("--mode", args->mode, "Mode of the reply topic (default: that of the requests)")
      ->check(CLI::IsMember({"lockstep", "free-run"}));
  cmd->add_option("--wait", args->wait, "Wait strategy")->check(CLI::IsMember({"adaptive", "spin", "block"}))
      ->capture_default_str();
  cmd->add_option("--transport", args->transport, "What carries the round trips (as `ping --transport`)")
      ->capture_default_str();
  cmd->add_option("--max-size", args->max_size, "Largest request to expect (transports that size buffers up front)")
      ->transform(size_at_most(kLargestPayload))->capture_default_str();
  cmd->add_option("--wait-set", args->wait_set, "Wait through a wait set of N topics (as `ping --wait-set`)")
      ->check(count_in(0, 64));
  cmd->add_option("--topic-ceiling", args->topic_ceiling, "Payload ceiling of the topics this pong creates (as `ping --topic-ceiling`)")
      ->transform(size_at_most(kLargestPayload))->capture_default_str();
  cmd->add_flag("--alternate", args->alternate, "With --wait-set: every other request is taken from the topic itself (as `ping --alternate`)");
  cmd->add_flag("--explain-tail", args->explain_tail,
                "Say in each reply where this pong's wait stood when the request came (for `ping --peer "
                "--explain-tail`; native, requests of 64 B and more)");
  cmd->add_option("--cpu-budget", args->cpu_budget_pct, "Adaptive wait: the % of a CPU this pong's polling may take (as `ping --cpu-budget`)")
      ->check(number_in(0.1, 100.0, "a percentage of a CPU"))->capture_default_str();
  cmd->add_flag("--once", args->once, "Exit when the ping that started this pong says it is done");
  cmd->add_option("--cpu", args->cpu, "Pin the pong to this CPU (as `ping --cpus` does with the pong it starts)")
      ->check(count_in(0, 4095));
  cmd->callback([args] {
    install_stop_handlers();
    measurement::ResponderRunOptions options;
    options.transport = args->transport;
    options.transport_options.max_payload = parse_size(args->max_size).value_or(64);
    options.transport_options.domain = globals().domain;
    options.transport_options.prefix = args->prefix;
    if (!args->mode.empty()) options.transport_options.mode = parse_mode(args->mode);
    options.transport_options.wait = parse_wait(args->wait).value_or(WaitStrategy::Adaptive);
    options.transport_options.stop_on_request = args->once;
    options.transport_options.wait_set_members = args->wait_set;
    options.transport_options.alternate_wait_set = args->alternate;
    options.transport_options.topic_ceiling = parse_size(args->topic_ceiling).value_or(kDefaultMaxPayload);
    options.transport_options.cancel = stop_flag();
    options.transport_options.trace_waits = args->explain_tail;
    options.transport_options.cpu_budget = args->cpu_budget_pct / 100;
    if (args->cpu >= 0) {
      require_allowed_cpu(args->cpu, "--cpu");
      options.cpu = args->cpu;
    }
    check(measurement::run_responder(options), "pong");
    // Ctrl-C is how a pong ends; a SIGTERM or SIGHUP still shows in the exit code.
    if (const int code = finished_exit_code(); code != kExitOk) throw Exit{code, ""};
  });
}

}  // namespace cerulion::cli
