// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/runner.hpp"

#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recording/playback.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "cerulion/recording/topic_selection.hpp"
#include "collector.hpp"
#include "plan_topics.hpp"

namespace cerulion::verify {
namespace {

using Clock = std::chrono::steady_clock;

// How often a wait looks at the command and the cancel flag while nothing arrives.
constexpr auto kRunnerCheckInterval = std::chrono::milliseconds(20);
// How often the startup wait looks for the command's subscriptions.
constexpr auto kSubscribePollInterval = std::chrono::milliseconds(2);

std::string fresh_domain() {
  static std::atomic<unsigned> counter{0};
  return "verify-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

std::string seconds_text(std::chrono::milliseconds ms) {
  const double s = static_cast<double>(ms.count()) / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string how_it_ended(const measurement::ChildExit& e) {
  if (e.signal != 0) {
    const char* name = ::sigabbrev_np(e.signal);
    return "was killed by signal " + std::to_string(e.signal) + (name ? " (SIG" + std::string(name) + ")" : "");
  }
  return "exited with code " + std::to_string(e.exit_code);
}

// One run: the command, the taps on its outputs, the playback of its inputs.
class Run {
 public:
  Run(const RunPlan& plan, const RunOptions& options, std::string domain)
      : plan_(plan), options_(options), domain_(std::move(domain)), collector_(plan.outputs) {}
  ~Run() { finish(); }

  RunResult execute();

 private:
  bool cancelled() const { return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed); }
  // Ends the run with `how` and `problem` unless it has ended already.
  void end(RunEnd how, std::string problem) {
    if (result_.end == RunEnd::Finished) {
      result_.end = how;
      result_.problem = std::move(problem);
    }
  }
  // end(), and the Status that stops the playback (Interrupted: the run's end says why).
  Status stop_run(RunEnd how, std::string problem) {
    end(how, std::move(problem));
    return Status(ErrorCode::Interrupted, "run ended");
  }
  // Checks the command and the cancel flag; an ended run's Status when either ends it.
  Status still_running(const std::string& when);
  Status wait_for_subscriptions();
  Status wait_for_outputs(const std::vector<std::uint64_t>& counts, const std::string& after);
  Status wait_until_quiet();
  Status before_input(const recorder::MessageView& m, Publisher& publisher);
  void finish();
  std::string stalled_problem() const;

  /// Where the command stopped answering: the output short of its count, that count, and when.
  struct Stall {
    std::size_t output = 0;
    std::uint64_t expected = 0;
    std::string when;
  };

  const RunPlan& plan_;
  const RunOptions& options_;
  std::string domain_;
  OutputCollector collector_;
  std::optional<recording::TapSet> taps_;
  std::optional<measurement::ChildProcess> child_;
  std::optional<Publisher> clock_;
  std::set<std::string> subscribed_;
  std::map<std::string, std::uint64_t> input_counts_;
  std::string last_input_;
  std::uint64_t next_input_ = 0;
  Clock::time_point startup_deadline_;
  RunResult result_;
  Stall stall_;
  bool finished_ = false;
};

Status Run::still_running(const std::string& when) {
  if (cancelled()) return stop_run(RunEnd::Interrupted, "interrupted");
  if (child_ && !child_->running()) {
    const auto e = child_->stop();
    return stop_run(RunEnd::CommandExited, "the command " + how_it_ended(e) + " " + when);
  }
  return {};
}

Status Run::wait_for_subscriptions() {
  std::vector<std::string> waiting = plan_.inputs;
  if (!options_.clock_topic.empty()) waiting.push_back(options_.clock_topic);
  while (!waiting.empty()) {
    std::erase_if(waiting, [&](const std::string& topic) {
      auto info = inspect_topic(topic, domain_);
      return info.ok() && info->count(Role::Subscriber) > 0;
    });
    if (waiting.empty()) break;
    if (Status st = still_running("before it subscribed to '" + waiting.front() + "'"); !st) return st;
    if (Clock::now() >= startup_deadline_) {
      return stop_run(RunEnd::NeverSubscribed, "the command did not subscribe to '" + waiting.front() + "' within " +
                                              seconds_text(options_.startup_timeout));
    }
    std::this_thread::sleep_for(kSubscribePollInterval);
  }
  return {};
}

Status Run::wait_for_outputs(const std::vector<std::uint64_t>& counts, const std::string& after) {
  const auto deadline = Clock::now() + options_.output_timeout;
  for (;;) {
    const auto short_of = collector_.wait_for_counts(counts, std::min(Clock::now() + kRunnerCheckInterval, deadline));
    if (!short_of) return {};
    const std::string when = after.empty() ? "before the first input" : "after input " + after;
    if (Status st = still_running(when + ", before its outputs came"); !st) return st;
    if (Clock::now() >= deadline) {
      // Worded once the run is over (stalled_problem), from the outputs the run reports.
      stall_ = Stall{*short_of, counts[*short_of], when};
      return stop_run(RunEnd::OutputTimeout, {});
    }
  }
}

Status Run::wait_until_quiet() {
  for (;;) {
    if (collector_.wait_quiet(options_.settle, Clock::now() + kRunnerCheckInterval)) return {};
    if (Status st = still_running(last_input_.empty() ? "before the first input" : "after input " + last_input_); !st) {
      return st;
    }
  }
}

Status Run::before_input(const recorder::MessageView& m, Publisher& publisher) {
  // A damaged recording's plan holds its intact part: the playback ends where that does.
  if (m.message.log_time >= plan_.intact_before) return Status(ErrorCode::Interrupted, "the intact part ends here");
  const std::string& topic = m.channel.topic;
  if (subscribed_.insert(topic).second) {
    // The startup wait saw a subscriber; a lockstep publisher counts it too before it publishes.
    const auto left = std::max(startup_deadline_ - Clock::now(), Clock::duration::zero());
    if (Status st = publisher.wait_for_subscribers(1, std::chrono::duration_cast<std::chrono::nanoseconds>(left)); !st) {
      if (Status running = still_running("before it subscribed to '" + topic + "'"); !running) return running;
      return stop_run(RunEnd::NeverSubscribed, "the command has no subscriber on '" + topic + "': " + st.message());
    }
  }
  if (next_input_ >= plan_.expected_before.size()) {
    return stop_run(RunEnd::Failed, "the recording changed while it was read: more inputs than planned");
  }
  if (plan_.has_outputs()) {
    if (Status st = wait_for_outputs(plan_.expected_before[next_input_], last_input_); !st) return st;
  } else if (next_input_ > 0) {
    if (Status st = wait_until_quiet(); !st) return st;
  }
  if (clock_) {
    const std::string now = "{\"ns\":" + std::to_string(m.message.log_time) + "}";
    if (auto sent = clock_->publish_text(now); !sent) {
      if (sent.code() == ErrorCode::Interrupted) return stop_run(RunEnd::Interrupted, "interrupted");
      return stop_run(RunEnd::Failed, "cannot publish on '" + options_.clock_topic + "': " + sent.message());
    }
  }
  last_input_ = input_label(topic, input_counts_[topic]++);
  ++next_input_;
  collector_.set_input(last_input_, next_input_);
  ++result_.inputs_published;
  return {};
}

RunResult Run::execute() {
  const auto began = Clock::now();
  recording::TapSetOptions taps;
  taps.selection = {.topics = plan_.outputs};
  taps.domain = domain_;
  taps.lockstep = true;  // nothing the command publishes is missed, however fast it publishes
  taps.readers = recording::Readers::PerTopic;
  // A thread a topic, blocked until the command publishes: no polling takes CPU from the command
  // (in lockstep the next input waits for its answer anyway).
  taps.wait = WaitStrategy::Block;
  taps.start = StartAt::First;
  taps.events = options_.events;
  auto tap_set = recording::TapSet::create(taps, collector_);
  if (!tap_set) {
    end(RunEnd::Failed, tap_set.message());
    return std::move(result_);
  }
  taps_.emplace(std::move(*tap_set));
  taps_->start();

  if (!options_.clock_topic.empty()) {
    PublisherOptions o;
    o.topic.domain = domain_;
    o.topic.type = TopicType{"json", {}};
    o.wait.cancel = options_.cancel;
    auto clock = Publisher::create(options_.clock_topic, o);
    if (!clock) {
      end(RunEnd::Failed, "cannot publish on '" + options_.clock_topic + "': " + clock.message());
      return std::move(result_);
    }
    clock_.emplace(std::move(*clock));
  }

  measurement::ChildOptions child;
  child.argv = options_.command;
  child.environment = {"CERULION_DOMAIN=" + domain_};
  child.out = measurement::Stream::Inherit;
  child.err = measurement::Stream::Inherit;
  auto started = measurement::ChildProcess::start(child);
  if (!started) {
    // Where the program was at fault (not found, not executable) the helper names it already.
    const std::string& why = started.message();
    const std::string& program = options_.command.front();
    end(RunEnd::CannotStart, why.find("'" + program + "'") != std::string::npos ? why : "cannot run '" + program + "': " + why);
    return std::move(result_);
  }
  child_.emplace(std::move(*started));
  startup_deadline_ = Clock::now() + options_.startup_timeout;

  if (wait_for_subscriptions().ok()) {
    const auto feeding = Clock::now();
    auto reader = recorder::Reader::open(plan_.recording);
    if (!reader) {
      end(RunEnd::Failed, reader.message());
    } else {
      recording::PlaybackOptions play;
      play.domain = domain_;
      play.paced = false;
      play.lockstep = true;
      play.selection = {.topics = plan_.inputs};
      play.cancel = options_.cancel;
      // A command that subscribed but stopped taking its inputs fills the ring; never a hang.
      play.publish_timeout = options_.output_timeout;
      play.events = options_.events;
      play.before_publish = [this](const recorder::MessageView& m, Publisher& p) { return before_input(m, p); };
      auto playback = recording::Playback::create(std::move(*reader), play);
      Status played = playback ? playback->run() : playback.status();
      if (!played && played.code() == ErrorCode::Timeout) {
        end(RunEnd::NotTaking, "the command took no input for " + seconds_text(options_.output_timeout) + " after input " +
                                   last_input_ + ": " + played.message());
      }
      if (!played && result_.end == RunEnd::Finished) end(RunEnd::Failed, played.message());
      if (playback && playback->interrupted()) end(RunEnd::Interrupted, "interrupted");
      // After the last input: its outputs, then quiet, to catch outputs beyond the recorded ones.
      if (result_.end == RunEnd::Finished && plan_.has_outputs()) {
        std::vector<std::uint64_t> all;
        for (const auto& o : plan_.outputs) {
          const TopicMessages* t = find_topic(plan_.expected, o);
          all.push_back(t ? t->messages.size() : 0);
        }
        (void)wait_for_outputs(all, last_input_);
      }
      if (result_.end == RunEnd::Finished) (void)wait_until_quiet();
    }
    result_.feeding = Clock::now() - feeding;
  }
  finish();
  result_.elapsed = Clock::now() - began;
  return std::move(result_);
}

void Run::finish() {
  if (finished_) return;
  finished_ = true;
  // A command that stopped answering may still answer as it is stopped: that is no answer to the
  // input it was given, so what it says then is not collected.
  if (result_.end == RunEnd::OutputTimeout && taps_) taps_->stop();
  if (child_) {
    const bool ran = child_->running();
    const auto e = child_->stop();
    // A command that ended on its own after its work is done is fine if it ended well.
    if (!ran && (e.signal != 0 || e.exit_code != 0)) {
      end(RunEnd::CommandExited, "the command " + how_it_ended(e) + " after input " + last_input_);
    }
  }
  if (taps_) taps_->stop();
  result_.outputs = collector_.take();
  if (result_.end == RunEnd::OutputTimeout) result_.problem = stalled_problem();
  taps_.reset();
  clock_.reset();
  // Whatever the command left (killed, it cannot remove its own segments).
  (void)clean_domain(domain_, false);
}

std::string Run::stalled_problem() const {
  const std::string& topic = plan_.outputs[stall_.output];
  const TopicMessages* collected = find_topic(result_.outputs, topic);
  const std::uint64_t came = collected ? collected->messages.size() : 0;
  // Counted from what the run reports, so the line agrees with its counts: an output that came
  // after the wait gave up is said to be late rather than missing.
  std::string counts = "the recording has " + std::to_string(stall_.expected) + " by then, " + std::to_string(came) + " came";
  if (came >= stall_.expected) counts += ", the last after the wait";
  std::string out = "the command stopped answering: no message on '" + topic + "' within " +
                    seconds_text(options_.output_timeout) + " " + stall_.when + " (" + counts + ")";
  const std::uint64_t not_fed = plan_.input_count - std::min(plan_.input_count, result_.inputs_published);
  if (not_fed > 0) out += "; " + std::to_string(not_fed) + (not_fed == 1 ? " input" : " inputs") + " not fed";
  return out;
}

}  // namespace

const char* to_string(RunEnd end) noexcept {
  switch (end) {
    case RunEnd::Finished: return "finished";
    case RunEnd::OutputTimeout: return "output timeout";
    case RunEnd::CommandExited: return "command exited";
    case RunEnd::NotTaking: return "not taking inputs";
    case RunEnd::NeverSubscribed: return "never subscribed";
    case RunEnd::CannotStart: return "cannot start";
    case RunEnd::Failed: return "failed";
    case RunEnd::Interrupted: return "interrupted";
  }
  return "?";
}

Result<RunResult> run_command(const RunPlan& plan, const RunOptions& options) {
  if (options.command.empty() || options.command.front().empty()) {
    return Status(ErrorCode::InvalidArgument, "no command to run", Subject::option("command"));
  }
  if (plan.outputs.empty()) {
    return Status(ErrorCode::InvalidArgument, "no output topic to collect", Subject::option("outputs"));
  }
  const std::string domain = options.domain.empty() ? fresh_domain() : options.domain;
  if (Status st = validate_domain(domain); !st) return st;
  if (!options.clock_topic.empty()) {
    auto clock = normalized_topics({options.clock_topic});
    if (!clock) return clock.status();
  }
  Run run(plan, options, domain);
  return run.execute();
}

}  // namespace cerulion::verify
