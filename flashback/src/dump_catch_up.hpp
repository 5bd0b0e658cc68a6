// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a dump adds from the topics' rings: the messages of its topics that the store does not hold
// yet (a keeper behind, or killed), and every sequence published before the request that neither
// holds, counted lost. A ring holds milliseconds of a fast topic, so the rings are copied first,
// as they are when the dump is asked for, and merged once the store is copied (anything stored
// meanwhile is in the store's copy, and taken from there). Read by the dumping process at its own
// priority as a passive tap through recording::TapSet.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store_impl.hpp"

namespace cerulion::flashback::detail {

/// One message as a ring held it.
struct RingMessage {
  std::uint32_t sequence = 0;  ///< 32 bits, as the store keeps them
  std::uint64_t publish_time = 0;
  std::uint64_t log_time = 0;
  std::vector<std::byte> data;
};

/// A topic's ring as the dump found it.
struct RingCopy {
  /// Its count of messages published when the dump started reading it (0: none, or unknown): the
  /// dump accounts for every sequence before it.
  std::uint64_t published = 0;
  std::vector<RingMessage> messages;  ///< oldest first
};

/// Copies the rings of `topics` (those that still exist: a tap never creates one), from the oldest
/// message each holds to the newest published, keyed by topic.
std::map<std::string, RingCopy> copy_rings(const std::vector<std::string>& topics, const std::string& domain);

/// A channel of the dump, and where what the dump holds of it ends.
struct CatchUpChannel {
  std::uint16_t channel_id = 0;
  std::string topic;
  /// The first sequence (32 bits) the dump does not hold; nullopt when unknown (nothing of it
  /// stored, and it is not known to have started since): everything the ring holds is taken, and
  /// the sequences before the first are not counted.
  std::optional<std::uint32_t> next_sequence;
  /// Its lost counter as of the dump's last message of it (or of next_sequence).
  std::uint64_t lost = 0;
};

/// Appends, from `rings`, the Message records of `channels` the dump lacks (logged no earlier than
/// `min_log_time`; published at `cutoff` or later) to `records`, and their losses to `losses` as
/// staged records would be (first_lost includes the gap before the first). A channel whose ring
/// was published past the last sequence the dump has of it counts the rest lost, in an entry of
/// `losses` (with no message if need be). The messages taken.
std::uint64_t catch_up(const std::vector<CatchUpChannel>& channels, const std::map<std::string, RingCopy>& rings,
                       std::uint64_t cutoff, std::uint64_t min_log_time, std::vector<std::byte>& records,
                       LossTable& losses);

}  // namespace cerulion::flashback::detail
