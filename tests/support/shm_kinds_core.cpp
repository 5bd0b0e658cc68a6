// SPDX-License-Identifier: Apache-2.0
// Core's kinds of object in /dev/shm, for the hostile cases: topic segments, wait-set bells and
// the log of removed topics.

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "bell.hpp"  // white box: a bell is not reached through the public API alone
#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/removed_topics.hpp"
#include "cerulion/core/subscriber.hpp"
#include "process.hpp"
#include "removed_topics.hpp"  // white box: the log's file name
#include "shm_objects.hpp"

namespace cerulion::test {
ShmObjectKind topic_segment_kind() {
  const std::string domain = unique_domain("hostile");
  ShmObjectKind kind;
  kind.noun = std::string(detail::kTopicSegment.noun);
  kind.prefix = std::string(detail::kTopicSegment.prefix);
  kind.path = detail::shm_path(segment_name(domain, "/planted").substr(1));
  kind.make = [domain]() -> Result<MadeObject> {
    PublisherOptions options;
    options.topic.domain = domain;
    auto pub = Publisher::create("/planted", options);
    if (!pub) return pub.status();
    return MadeObject{detail::shm_path(segment_name(domain, "/planted").substr(1)),
                      std::make_shared<Publisher>(std::move(*pub))};
  };
  kind.open = [domain](const std::string&) -> Status {
    SubscriberOptions options;
    options.topic.domain = domain;
    return Subscriber::create("/planted", options).status();
  };
  kind.listing_problems = [domain] {
    auto listing = list_topics(domain);
    return listing ? listing->problems : std::vector<std::string>{listing.message()};
  };
  return kind;
}

ShmObjectKind bell_kind() {
  const std::string domain = unique_domain("hostile");
  const std::uint64_t planted = 0x5eed000000000000ull | static_cast<std::uint64_t>(::getpid());
  ShmObjectKind kind;
  kind.noun = std::string(detail::kWaitSetBell.noun);
  kind.prefix = std::string(detail::kWaitSetBell.prefix);
  kind.path = detail::shm_path(detail::bell_name(planted));
  kind.in_its_place = InItsPlace::Avoided;
  kind.make = [domain]() -> Result<MadeObject> {
    auto bell = detail::Bell::create(domain, std::nullopt);
    if (!bell) return bell.status();
    const std::string path = detail::shm_path(detail::bell_name(bell->id()));
    return MadeObject{path, std::make_shared<detail::Bell>(std::move(*bell))};
  };
  kind.open = [](const std::string& path) -> Status {
    const std::string name = std::filesystem::path(path).filename().string();
    std::uint64_t id = 0;
    if (std::sscanf(name.c_str() + detail::kWaitSetBell.prefix.size(), "%" SCNx64, &id) != 1) {
      return Status(ErrorCode::InvalidArgument, "not a bell's name: " + name);
    }
    return detail::open_bell(id).status();
  };
  return kind;
}

ShmObjectKind removed_log_kind() {
  const std::string domain = unique_domain("hostile");
  ShmObjectKind kind;
  kind.noun = std::string(detail::kRemovedTopicLog.noun);
  kind.prefix = std::string(detail::kRemovedTopicLog.prefix);
  kind.path = detail::shm_path(detail::removed_log_name(domain));
  kind.make = [domain]() -> Result<MadeObject> {
    auto log = RemovedTopicLog::listen(domain);
    if (!log) return log.status();
    return MadeObject{detail::shm_path(detail::removed_log_name(domain)), std::make_shared<RemovedTopicLog>(std::move(*log))};
  };
  kind.open = [domain](const std::string&) -> Status { return RemovedTopicLog::listen(domain).status(); };
  return kind;
}

}  // namespace cerulion::test
