// SPDX-License-Identifier: Apache-2.0
// The view's kind of object in /dev/shm, for the hostile cases: a running view server's status file.

#include "cerulion/view/status.hpp"
#include "status_file_kind.hpp"

namespace cerulion::test {

ShmObjectKind view_status_kind() {
  return status_file_kind(detail::kViewStatusFile,
                          StatusFileFunctions<view::ViewStatus, view::ViewListing>{
                              view::status_file_path, view::write_status_file, view::read_status_file,
                              view::read_status_files, view::kDefaultStatusDirectory},
                          view::ViewStatus{});
}

}  // namespace cerulion::test
