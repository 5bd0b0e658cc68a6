// SPDX-License-Identifier: Apache-2.0
// The bridge's kind of object in /dev/shm, for the hostile cases: a running bridge's status file.

#include <unistd.h>

#include "cerulion/bridge/status.hpp"
#include "cerulion/core/detail/shm_file.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

namespace cerulion::test {

ShmObjectKind bridge_status_kind() {
  const std::string domain = unique_domain("hostile");
  const auto pid = static_cast<std::uint32_t>(::getpid());  // alive, so its file is read, not removed
  ShmObjectKind kind;
  kind.noun = std::string(detail::kBridgeStatusFile.noun);
  kind.prefix = std::string(detail::kBridgeStatusFile.prefix);
  kind.path = bridge::status_file_path(bridge::kDefaultStatusDirectory, domain, pid);
  kind.in_its_place = InItsPlace::Replaced;
  kind.make = [domain, pid, path = kind.path]() -> Result<MadeObject> {
    bridge::BridgeStatus status;
    status.pid = pid;
    status.domain = domain;
    status.direction = "both";
    if (Status st = bridge::write_status_file(path, status); !st.ok()) return st;
    return MadeObject{path, nullptr};
  };
  kind.open = [](const std::string& path) { return bridge::read_status_file(path).status(); };
  kind.listing_problems = [domain] {
    auto listing = bridge::read_status_files(bridge::kDefaultStatusDirectory, domain);
    return listing ? listing->problems : std::vector<std::string>{listing.message()};
  };
  return kind;
}

}  // namespace cerulion::test
