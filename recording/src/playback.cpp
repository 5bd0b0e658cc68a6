// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recording/playback.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/recorder/profile.hpp"

namespace cerulion::recording {

namespace detail {

using Clock = std::chrono::steady_clock;

class PlaybackImpl {
 public:
  PlaybackImpl(recorder::Reader reader, PlaybackOptions options, TopicMatcher matcher)
      : reader_(std::move(reader)), options_(std::move(options)), matcher_(std::move(matcher)),
        problems_told_(reader_.problems().size()) {}

  Status run();

  struct Playing {
    Publisher publisher;
    std::uint64_t published = 0;
  };
  std::map<std::uint16_t, Playing> playing;
  // Asked by other threads while run() plays.
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> passes{0};
  std::atomic<std::uint64_t> position_ns{0};
  std::atomic<std::uint64_t> duration_ns{0};
  std::atomic<bool> interrupted{false};

 private:
  bool cancelled() const { return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed); }
  bool selected(const std::string& topic) const { return matcher_.matches(topic); }
  void warn(const std::string& topic, const std::string& line) const {
    report(options_.events, EventKind::Warning, topic, line);
  }
  void warn_new_problems() {
    for (const auto& problems = reader_.problems(); problems_told_ < problems.size(); ++problems_told_) {
      warn("", problems[problems_told_]);
    }
  }
  bool sleep_until(Clock::time_point deadline) const;
  recorder::profile::TopicSettings recorded_settings(const recorder::Channel& ch) const;
  std::optional<TopicType> recorded_type(const recorder::Channel& ch) const;
  Result<Publisher> open_publisher(const recorder::Channel& ch) const;
  /// Says once per topic that it has live publishers besides the playback.
  void warn_of_live_publishers(const TopicInfo& topic) const;
  Status play_pass(const recorder::ReadMessagesOptions& read);

  recorder::Reader reader_;
  PlaybackOptions options_;
  TopicMatcher matcher_;
  std::size_t problems_told_;
  mutable std::set<std::string> interleaving_told_;
};

// A pacing sleep looks at the cancel flag this often.
constexpr auto kCancelCheckInterval = std::chrono::milliseconds(50);

bool PlaybackImpl::sleep_until(Clock::time_point deadline) const {
  while (!cancelled()) {
    const auto now = Clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(deadline - now, kCancelCheckInterval));
  }
  return false;
}

recorder::profile::TopicSettings PlaybackImpl::recorded_settings(const recorder::Channel& ch) const {
  auto settings = recorder::profile::parse_channel_metadata(ch.metadata);
  if (settings.ok()) return *settings;
  warn(ch.topic, "'" + ch.topic + "': " + settings.message() + ": its recorded topic settings are ignored");
  return {};
}

std::optional<TopicType> PlaybackImpl::recorded_type(const recorder::Channel& ch) const {
  const auto& schemas = reader_.summary().schemas;
  auto schema = schemas.find(ch.schema_id);
  const bool has_schema = ch.schema_id != 0 && schema != schemas.end();
  TopicType type = recorder::profile::topic_type(ch, has_schema ? &schema->second : nullptr);
  if (type.raw()) return std::nullopt;
  if (Status st = check_topic_type(type); !st) {
    // A foreign file's encoding cerulion does not know: its bytes still play.
    warn(ch.topic, "'" + ch.topic + "': " + st.message() + ": its messages are played as raw bytes");
    return std::nullopt;
  }
  return type;
}

Result<Publisher> PlaybackImpl::open_publisher(const recorder::Channel& ch) const {
  PublisherOptions options;
  options.topic.domain = options_.domain;
  options.topic.type = recorded_type(ch);
  options.wait.cancel = options_.cancel;
  const auto recorded = recorded_settings(ch);
  if (options_.lockstep) {
    options.topic.mode = Mode::Lockstep;
  } else if (!recorded.mode.empty()) {
    options.topic.mode = parse_mode(recorded.mode);
    if (!options.topic.mode) {
      warn(ch.topic, "'" + ch.topic + "': recorded mode '" + recorded.mode + "' is unknown: the topic's own mode is used");
    }
  }
  const auto existing = inspect_topic(ch.topic, options_.domain);
  if (!existing.ok()) {
    if (options_.lockstep) {
      options.topic.depth = 1;  // room for one more = every subscriber released the previous message
    } else if (recorded.depth) {
      options.topic.depth = recorded.depth;
    }
    if (recorded.max_payload) options.topic.max_payload = recorded.max_payload;
  }
  auto publisher = Publisher::create(ch.topic, options);
  if (!publisher && publisher.code() == ErrorCode::Incompatible) {
    // The topic exists with other settings: join it as it is (a type clash still refuses).
    options.topic.mode.reset();
    options.topic.depth.reset();
    publisher = Publisher::create(ch.topic, options);
  }
  if (!publisher) {
    return Status(publisher.code(), "cannot publish on '" + ch.topic + "': " + publisher.message(),
                  Subject::topic(ch.topic));
  }
  if (existing.ok()) warn_of_live_publishers(*existing);
  if (options_.lockstep && publisher->mode() != Mode::Lockstep) {
    // A topic's mode is fixed by whoever created it; silence would promise a replay it is not.
    warn(ch.topic, "'" + ch.topic + "' already runs in " + to_string(publisher->mode()) +
         " mode, which wins over lockstep playback: a slow subscriber may lose messages");
  }
  return publisher;
}

void PlaybackImpl::warn_of_live_publishers(const TopicInfo& topic) const {
  std::set<std::uint32_t> pids;
  std::uint32_t live = 0;
  for (const auto& p : topic.participants) {
    if (p.role != Role::Publisher || !p.alive) continue;
    ++live;
    pids.insert(p.pid);
  }
  // Two channels of a recording may name one topic: said once.
  if (live == 0 || !interleaving_told_.insert(topic.name).second) return;
  std::string listed;
  for (auto pid : pids) listed += (listed.empty() ? "" : ", ") + std::to_string(pid);
  const std::string pid_word = pids.size() == 1 ? "pid " : "pids ";
  warn(topic.name, "'" + topic.name + "' already has " +
                       (live == 1 ? "a live publisher (" + pid_word + listed + "): its"
                                  : "live publishers (" + pid_word + listed + "): their") +
                       " messages and the played ones interleave");
}

Status PlaybackImpl::play_pass(const recorder::ReadMessagesOptions& read) {
  std::optional<std::uint64_t> first_log;
  const auto started = Clock::now();
  Status failed;
  Status read_status = reader_.read_messages(read, [&](const recorder::MessageView& m) {
    if (cancelled()) return false;
    auto it = playing.find(m.channel.id);
    if (it == playing.end()) {
      auto publisher = open_publisher(m.channel);
      if (!publisher) {
        failed = publisher.status();
        return false;
      }
      it = playing.emplace(m.channel.id, Playing{std::move(*publisher)}).first;
    }
    if (!first_log) first_log = m.message.log_time;
    const std::uint64_t offset_ns = m.message.log_time >= *first_log ? m.message.log_time - *first_log : 0;
    const auto due = started + std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(offset_ns) / options_.rate));
    if (options_.paced ? !sleep_until(due) : cancelled()) return false;
    if (options_.before_publish) {
      if (Status st = options_.before_publish(m, it->second.publisher); !st) {
        if (st.code() != ErrorCode::Interrupted) failed = std::move(st);
        return false;
      }
    }
    auto sequence = it->second.publisher.publish_copy(m.message.data, options_.publish_timeout);
    if (!sequence) {
      if (sequence.code() != ErrorCode::Interrupted) {
        failed = Status(sequence.code(), "publishing on '" + m.channel.topic + "': " + sequence.message(),
                        Subject::topic(m.channel.topic));
      }
      return false;
    }
    ++it->second.published;
    published.fetch_add(1, std::memory_order_relaxed);
    position_ns.store(offset_ns, std::memory_order_relaxed);
    return true;
  });
  warn_new_problems();
  if (!failed.ok()) return failed;
  return read_status;
}

Status PlaybackImpl::run() {
  const auto& stats = reader_.summary().statistics;
  recorder::ReadMessagesOptions read;
  read.channel_filter = [this](const recorder::Channel& ch) { return selected(ch.topic); };
  read.order = recorder::ReadOrder::LogTime;
  read.start_time = stats.message_start_time + options_.start_offset_ns;
  duration_ns.store(stats.message_end_time > read.start_time ? stats.message_end_time - read.start_time : 0);
  Status status;
  do {
    status = play_pass(read);
    passes.fetch_add(1);
    if (!status.ok() || published.load() == 0) break;  // nothing to play: looping would spin
  } while (options_.loop && !cancelled());
  interrupted.store(cancelled());
  return status;
}

}  // namespace detail

Result<Playback> Playback::create(recorder::Reader reader, PlaybackOptions options) {
  if (!(options.rate > 0)) {
    return Status(ErrorCode::InvalidArgument, "a playback's rate must be positive");
  }
  auto matcher = TopicMatcher::compile(options.selection);
  if (!matcher) return matcher.status();
  bool any = false;
  for (const auto& [id, ch] : reader.summary().channels) any = any || matcher->matches(ch.topic);
  if (!any) return Status(ErrorCode::NotFound, "no topic of the recording is selected");
  return Playback(std::make_unique<detail::PlaybackImpl>(std::move(reader), std::move(options), std::move(*matcher)));
}

Playback::Playback(std::unique_ptr<detail::PlaybackImpl> impl) : impl_(std::move(impl)) {}
Playback::Playback(Playback&&) noexcept = default;
Playback& Playback::operator=(Playback&&) noexcept = default;
Playback::~Playback() = default;

Status Playback::run() { return impl_->run(); }
PlaybackProgress Playback::progress() const {
  return {impl_->published.load(), impl_->position_ns.load(), impl_->duration_ns.load(), impl_->passes.load()};
}
std::uint64_t Playback::published() const { return impl_->published.load(); }
std::uint64_t Playback::passes() const { return impl_->passes.load(); }
bool Playback::interrupted() const { return impl_->interrupted.load(); }

std::vector<PlaybackTopicCounts> Playback::counts() const {
  std::vector<PlaybackTopicCounts> out;
  for (const auto& [id, p] : impl_->playing) out.push_back({p.publisher.topic(), p.published});
  return out;
}

}  // namespace cerulion::recording
