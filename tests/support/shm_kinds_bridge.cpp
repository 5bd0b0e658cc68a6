// SPDX-License-Identifier: Apache-2.0
// The bridge's kind of object in /dev/shm, for the hostile cases: a running bridge's status file.

#include "cerulion/bridge/status.hpp"
#include "status_file_kind.hpp"

namespace cerulion::test {

ShmObjectKind bridge_status_kind() {
  bridge::BridgeStatus status;
  status.direction = "both";
  return status_file_kind(detail::kBridgeStatusFile,
                          StatusFileFunctions<bridge::BridgeStatus, bridge::BridgeListing>{
                              bridge::status_file_path, bridge::write_status_file, bridge::read_status_file,
                              bridge::read_status_files, bridge::kDefaultStatusDirectory},
                          status);
}

}  // namespace cerulion::test
