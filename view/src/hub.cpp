// SPDX-License-Identifier: Apache-2.0
#include "hub.hpp"

#include <algorithm>
#include <random>
#include <unordered_set>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/view/status.hpp"

namespace cerulion::view::detail {
namespace {

std::string new_session_id() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

}  // namespace

Hub::Hub(const ViewOptions& options, recording::TopicMatcher matcher)
    : options_(options), matcher_(std::move(matcher)), session_id_(new_session_id()) {}

std::vector<std::shared_ptr<ClientSlot>> Hub::clients_snapshot() const {
  std::shared_lock lock(clients_mutex_);
  return clients_;
}

void Hub::advertise_locked(TopicChannel& channel) {
  channel.id = next_channel_id_++;
  channel.advertised = true;
  const std::string text = advertise_json({channel_for(channel.id, channel.topic, channel.type)});
  for (const auto& client : clients_snapshot()) (void)client->push_text(text);
  recording::report(options_.events, recording::EventKind::Info, channel.topic,
                    fmt::format("advertising '{}' as channel {} ({})", channel.topic, channel.id, describe(channel.type)));
}

Hub::TopicChannel& Hub::channel_locked(const std::string& topic) {
  auto& channel = channels_[topic];
  if (!channel) {
    channel = std::make_unique<TopicChannel>();
    channel->topic = topic;
  }
  return *channel;
}

void Hub::unadvertise(const std::vector<std::uint32_t>& ids) {
  if (ids.empty()) return;
  const std::string text = unadvertise_json(ids);
  for (const auto& client : clients_snapshot()) {
    for (std::uint32_t id : ids) client->drop_channel(id);
    (void)client->push_text(text);
  }
}

void Hub::on_topic(const recording::TopicDescription& topic) {
  std::vector<std::uint32_t> replaced;
  {
    std::lock_guard lock(channels_mutex_);
    TopicChannel& channel = channel_locked(topic.topic);
    if (by_index_.size() <= topic.index) by_index_.resize(topic.index + 1, nullptr);
    by_index_[topic.index] = &channel;
    // Advertised from the listing already, as the same type: the channel stays as it is.
    if (channel.advertised && channel.type == topic.type) return;
    if (channel.advertised) replaced.push_back(channel.id);
    channel.type = topic.type;
    advertise_locked(channel);
  }
  unadvertise(replaced);
}

bool Hub::on_sample(const recording::TappedSample& sample) {
  std::uint32_t channel_id = 0;
  {
    std::lock_guard lock(channels_mutex_);
    if (sample.topic_index >= by_index_.size() || !by_index_[sample.topic_index]) return false;
    TopicChannel& channel = *by_index_[sample.topic_index];
    // A topic unadvertised for want of a publisher is back: it is a new channel.
    if (!channel.advertised) advertise_locked(channel);
    ++channel.messages;
    channel.lost += sample.lost_before;
    channel.bytes += sample.data.size();
    channel.last_size = sample.data.size();
    channel_id = channel.id;
  }
  // Copied once, for the first client subscribed, and shared by the others.
  Payload payload;
  const auto make = [&] {
    if (!payload) payload = std::make_shared<const std::vector<std::byte>>(sample.data.begin(), sample.data.end());
    return payload;
  };
  lost_.fetch_add(sample.lost_before, std::memory_order_relaxed);
  std::shared_lock lock(clients_mutex_);
  for (const auto& client : clients_) (void)client->push_message(channel_id, sample.log_time, make, sample.lost_before);
  return true;
}

std::shared_ptr<ClientSlot> Hub::connect(std::string peer, std::function<void()> wake) {
  // Channels first, then clients: no topic is advertised between the snapshot and the client's
  // joining the list (advertise_locked holds channels_mutex_ too).
  std::lock_guard channels_lock(channels_mutex_);
  std::unique_lock clients_lock(clients_mutex_);
  auto client = std::make_shared<ClientSlot>(next_client_++, std::move(peer), options_, std::move(wake));
  (void)client->push_text(server_info_json(options_.name, session_id_));
  std::vector<Channel> channels;
  for (const auto& [topic, c] : channels_) {
    if (c->advertised) channels.push_back(channel_for(c->id, c->topic, c->type));
  }
  if (!channels.empty()) (void)client->push_text(advertise_json(channels));
  clients_.push_back(client);
  connections_.fetch_add(1, std::memory_order_relaxed);
  return client;
}

void Hub::disconnect(const std::shared_ptr<ClientSlot>& client) {
  std::unique_lock lock(clients_mutex_);
  auto it = std::find(clients_.begin(), clients_.end(), client);
  if (it == clients_.end()) return;
  dropped_gone_.fetch_add(client->dropped_total(), std::memory_order_relaxed);
  clients_.erase(it);
}

std::size_t Hub::client_count() const {
  std::shared_lock lock(clients_mutex_);
  return clients_.size();
}

std::string Hub::topic_of(std::uint32_t channel_id) const {
  std::lock_guard lock(channels_mutex_);
  for (const auto& [topic, c] : channels_) {
    if (c->advertised && c->id == channel_id) return c->topic;
  }
  return {};
}

void Hub::handle(ClientSlot& client, std::string_view text) {
  const ClientRequest request = parse_client_request(text);
  std::vector<std::string> problems;
  if (const auto* s = std::get_if<SubscribeRequest>(&request)) {
    std::vector<std::string> topics;
    for (const auto& sub : s->subscriptions) topics.push_back(topic_of(sub.channel_id));
    problems = client.subscribe(*s, topics);
  } else if (const auto* u = std::get_if<UnsubscribeRequest>(&request)) {
    problems = client.unsubscribe(*u);
  } else if (const auto* op = std::get_if<UnsupportedRequest>(&request)) {
    problems.push_back(fmt::format("unsupported op '{}' (this server implements subscribe and unsubscribe)", op->op));
  } else {
    problems.push_back("bad request: " + std::get<BadRequest>(request).problem);
  }
  for (const auto& p : problems) (void)client.push_text(status_json(StatusLevel::Error, p));
}

void Hub::tick() {
  const auto now = std::chrono::steady_clock::now();
  // Which topics have a live publisher; a listing that fails changes nothing.
  auto listing = list_topics(options_.taps.domain);
  std::unordered_set<std::string> published;
  std::vector<std::uint32_t> gone;
  {
    std::lock_guard lock(channels_mutex_);
    if (listing.ok()) {
      for (const auto& t : listing->topics) {
        // A topic the taps cannot open (another user's, damaged) is not offered.
        if (t.count(Role::Publisher) == 0 || t.foreign || !t.damage.empty() || !matcher_.matches(t.name)) continue;
        published.insert(t.name);
        TopicChannel& channel = channel_locked(t.name);
        channel.rate_hz = t.rate_hz;  // the topic's own recent rate, as `cerulion topic` gives it
        if (channel.advertised) continue;
        if (t.type_declared) channel.type = t.type;
        advertise_locked(channel);
      }
    }
    for (auto& [topic, c] : channels_) {
      if (listing.ok() && c->advertised && !published.count(c->topic)) {
        c->advertised = false;
        c->rate_hz = 0;
        gone.push_back(c->id);
        recording::report(options_.events, recording::EventKind::Info, c->topic,
                          fmt::format("unadvertising '{}' (channel {}): no publisher", c->topic, c->id));
      }
    }
  }
  unadvertise(gone);
  const auto clients = clients_snapshot();
  if (std::chrono::duration<double>(now - last_drop_report_).count() >= options_.drop_report_interval_s) {
    last_drop_report_ = now;
    for (const auto& client : clients) {
      const auto [drops, losses] = client->take_drops_and_losses();
      for (const auto& [topic, count] : drops) {
        (void)client->push_text(status_json(
            StatusLevel::Warning,
            fmt::format("dropped {} message{} of '{}': this client reads slower than they come (the newest are kept)",
                        count, count == 1 ? "" : "s", topic)));
      }
      for (const auto& [topic, count] : losses) {
        (void)client->push_text(status_json(
            StatusLevel::Warning,
            fmt::format("lost {} message{} of '{}' before the view read them: it read the topic slower than it was "
                        "published (a busy machine), and the publisher overwrote them",
                        count, count == 1 ? "" : "s", topic)));
      }
    }
  }
}

void Hub::note_sent(std::size_t bytes, bool message) {
  bytes_sent_.fetch_add(bytes, std::memory_order_relaxed);
  if (message) messages_sent_.fetch_add(1, std::memory_order_relaxed);
}

void Hub::note_refused() { refused_.fetch_add(1, std::memory_order_relaxed); }

ViewCounts Hub::counts() const {
  ViewCounts counts;
  counts.messages_sent = messages_sent_.load();
  counts.bytes_sent = bytes_sent_.load();
  counts.connections = connections_.load();
  counts.refused = refused_.load();
  counts.dropped = dropped_gone_.load();
  counts.lost = lost_.load();
  for (const auto& client : clients_snapshot()) {
    ++counts.clients;
    counts.subscriptions += client->subscriptions();
    counts.dropped += client->dropped_total();
    counts.queued_bytes += client->queued_bytes();
  }
  std::lock_guard lock(channels_mutex_);
  for (const auto& [topic, c] : channels_) {
    if (!c->advertised) continue;
    counts.channels.push_back({c->id, c->topic, channel_for(c->id, c->topic, c->type).encoding, c->messages, c->bytes,
                               c->last_size, c->rate_hz, c->lost});
  }
  return counts;
}

std::string Hub::channels_json() const { return to_json(counts().channels); }

}  // namespace cerulion::view::detail
