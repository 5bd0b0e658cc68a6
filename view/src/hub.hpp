// SPDX-License-Identifier: Apache-2.0
#pragma once
// The middle of a view server, without sockets: it is the tap set's sink (topics become channels,
// samples go to the queues of the clients subscribed to them), keeps the clients' state, answers
// their requests, and once a second looks for topics that went away and reports drops. The
// server's I/O side (server.cpp) only moves bytes between sockets and ClientSlots.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cerulion/recording/tap_set.hpp"
#include "cerulion/recording/topic_selection.hpp"
#include "cerulion/view/counts.hpp"
#include "cerulion/view/options.hpp"
#include "client_slot.hpp"

namespace cerulion::view::detail {

class Hub final : public recording::SampleSink {
 public:
  /// `matcher`: the topics served, as the tap set reads them.
  Hub(const ViewOptions& options, recording::TopicMatcher matcher);

  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

  /// A client connected: its slot, already holding serverInfo and the advertise of every
  /// channel. `wake` is called (from any thread) when something waits for it.
  std::shared_ptr<ClientSlot> connect(std::string peer, std::function<void()> wake);
  void disconnect(const std::shared_ptr<ClientSlot>& client);
  std::size_t client_count() const;
  /// One text message from a client; problems go back to it as status messages.
  void handle(ClientSlot& client, std::string_view text);
  /// Once a second: advertises topics with a live publisher that the taps have not read from yet
  /// (a topic that existed before the server is read from its next message, which may be long in
  /// coming), unadvertises topics without one, reports drops and losses, takes each topic's rate from its listing.
  void tick();
  /// Counts messages of a topic that came and went before the view's taps could open it: lost,
  /// with no channel to show them on.
  void count_removed_unread(std::uint64_t messages) { lost_.fetch_add(messages, std::memory_order_relaxed); }
  /// Bytes of a frame the I/O side wrote to a client.
  void note_sent(std::size_t bytes, bool message);
  void note_refused();

  ViewCounts counts() const;
  /// The channels with their counts, as JSON, for the page.
  std::string channels_json() const;

 private:
  struct TopicChannel {
    std::string topic;
    TopicType type;
    std::uint32_t id = 0;
    bool advertised = false;
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
    std::uint64_t last_size = 0;
    double rate_hz = 0;
    std::uint64_t lost = 0;  ///< TappedSample::lost_before, summed
  };
  /// Advertises `channel` under a new id to every client (channels_mutex_ held).
  void advertise_locked(TopicChannel& channel);
  /// The channel of `topic`, made (not advertised) when there is none (channels_mutex_ held).
  TopicChannel& channel_locked(const std::string& topic);
  /// Unadvertises these channels to every client (channels_mutex_ not held).
  void unadvertise(const std::vector<std::uint32_t>& ids);
  std::string topic_of(std::uint32_t channel_id) const;
  std::vector<std::shared_ptr<ClientSlot>> clients_snapshot() const;

  const ViewOptions& options_;
  const recording::TopicMatcher matcher_;
  const std::string session_id_;

  mutable std::mutex channels_mutex_;
  std::map<std::string, std::unique_ptr<TopicChannel>> channels_;  ///< by topic
  std::vector<TopicChannel*> by_index_;                            ///< by the tap set's topic index
  std::uint32_t next_channel_id_ = 1;

  mutable std::shared_mutex clients_mutex_;
  std::vector<std::shared_ptr<ClientSlot>> clients_;
  std::uint64_t next_client_ = 1;

  std::chrono::steady_clock::time_point last_drop_report_ = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> messages_sent_{0}, bytes_sent_{0}, connections_{0}, refused_{0}, dropped_gone_{0}, lost_{0};
};

}  // namespace cerulion::view::detail
