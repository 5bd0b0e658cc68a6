// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a dump adds from the topics' rings: the messages of its channels that the store does not
// hold yet (a keeper behind, starved of CPU at its idle priority, or killed), read by the dumping
// process at its own priority as a passive tap through recording::TapSet; those the ring no longer
// holds are counted lost. The topic's ring is the keeper's staging area before its tap.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store_impl.hpp"

namespace cerulion::flashback::detail {

/// A kept channel, and where the store's copy of it ends.
struct CatchUpChannel {
  std::uint16_t channel_id = 0;
  std::string topic;
  /// The first sequence (32 bits, as the store keeps them) the dump does not hold; nullopt when
  /// unknown (nothing of it stored): everything the ring holds is taken.
  std::optional<std::uint32_t> next_sequence;
  /// Its lost counter as of the dump's last message of it (0 when none).
  std::uint64_t lost = 0;
};

/// Appends Message records to `records` (logged no earlier than `min_log_time`; published at
/// `cutoff` or later) and their channels' losses to `losses`, as staged records would be
/// (first_lost includes the gap before the first, so a channel already in the dump has its
/// `lost` there). Topics gone are skipped, never created. The messages read.
std::uint64_t catch_up(const std::vector<CatchUpChannel>& channels, const std::string& domain, std::uint64_t cutoff,
                       std::uint64_t min_log_time, std::vector<std::byte>& records, LossTable& losses);

}  // namespace cerulion::flashback::detail
