// `cerulion pong`: the echo side of `cerulion ping`.

#include <cstring>

#include <fmt/core.h>

#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/warm.hpp"
#include "command.hpp"
#include "cpu_pinning.hpp"
#include "pingpong.hpp"

namespace cerulion::cli {

CERULION_HOT_PATH int run_pong(const PongOptions& options) {
  if (options.cpu && !pin_current_thread(*options.cpu)) {
    throw Exit{kExitFailure, fmt::format("pong: cannot pin to CPU {}", *options.cpu)};
  }
  SubscriberOptions sub_options;
  sub_options.topic.domain = options.domain;
  sub_options.wait = {options.wait, options.cancel};
  auto subscriber = take(Subscriber::create(request_topic(options.prefix), sub_options));

  PublisherOptions pub_options;
  pub_options.topic.domain = options.domain;
  pub_options.topic.mode = options.mode ? options.mode : std::optional<Mode>(subscriber.mode());
  pub_options.wait = {options.wait, options.cancel};
  auto publisher = take(Publisher::create(reply_topic(options.prefix), pub_options));
  if (options.ready) options.ready->store(true);

  for (;;) {
    auto request = subscriber.receive();
    if (!request.ok()) {
      if (request.code() == ErrorCode::Interrupted) return kExitOk;
      check(request.status(), "pong: receive");
    }
    std::uint64_t stamp = 0;
    const std::size_t size = request->size();
    if (size >= kStampBytes) std::memcpy(&stamp, request->data().data(), kStampBytes);
    if (stamp == kStopStamp) {
      if (options.stop_on_request) return kExitOk;
      continue;
    }
    request->release();  // before loaning: lockstep never waits on our own hold
    auto reply = publisher.loan(size);
    if (!reply.ok()) {
      if (reply.code() == ErrorCode::Interrupted) return kExitOk;
      check(reply.status(), "pong: loan");
    }
    if (size >= kStampBytes) std::memcpy(reply->data().data(), &stamp, kStampBytes);
    auto sent = publisher.publish(std::move(*reply));
    if (!sent.ok()) {
      if (sent.code() == ErrorCode::Interrupted) return kExitOk;
      check(sent.status(), "pong: publish");
    }
  }
}

namespace {

void add_pong_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("pong", "Answer `cerulion ping --peer` round trips (runs until Ctrl-C)");
  struct Args {
    std::string prefix = kDefaultPingPrefix;
    std::string mode;
    std::string wait = "adaptive";
    bool once = false;
    int cpu = -1;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--topic", args->prefix, "Topic prefix: requests on PREFIX/ping, replies on PREFIX/pong")
      ->capture_default_str();
  cmd->add_option("--mode", args->mode, "Mode of the reply topic (default: that of the requests)")
      ->check(CLI::IsMember({"lockstep", "free-run"}));
  cmd->add_option("--wait", args->wait, "Wait strategy")->check(CLI::IsMember({"adaptive", "spin", "block"}))
      ->capture_default_str();
  cmd->add_flag("--once", args->once, "Exit when the ping that started this pong says it is done");
  cmd->add_option("--cpu", args->cpu, "Pin the pong to this CPU (as `ping --cpus` does with the pong it starts)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args] {
    install_stop_handlers();
    PongOptions options;
    options.domain = globals().domain;
    options.prefix = args->prefix;
    if (!args->mode.empty()) options.mode = parse_mode(args->mode);
    options.wait = parse_wait(args->wait).value_or(WaitStrategy::Adaptive);
    options.stop_on_request = args->once;
    if (args->cpu >= 0) {
      require_allowed_cpu(args->cpu, "--cpu");
      options.cpu = args->cpu;
    }
    options.cancel = stop_flag();
    int code = run_pong(options);
    // Ctrl-C is how a pong ends; a SIGTERM or SIGHUP still shows in the exit code.
    if (code == kExitOk) code = finished_exit_code();
    if (code != kExitOk) throw Exit{code, ""};
  });
}

const CommandRegistration registration(31, add_pong_command);

}  // namespace
}  // namespace cerulion::cli
