// SPDX-License-Identifier: Apache-2.0
// The view's kind of object in /dev/shm, for the hostile cases: a running view server's status file.

#include <unistd.h>

#include "cerulion/core/detail/shm_file.hpp"
#include "cerulion/view/status.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

namespace cerulion::test {

ShmObjectKind view_status_kind() {
  const std::string domain = unique_domain("hostile");
  const auto pid = static_cast<std::uint32_t>(::getpid());  // alive, so its file is read, not removed
  ShmObjectKind kind;
  kind.noun = std::string(detail::kViewStatusFile.noun);
  kind.prefix = std::string(detail::kViewStatusFile.prefix);
  kind.path = view::status_file_path(view::kDefaultStatusDirectory, domain, pid);
  kind.in_its_place = InItsPlace::Replaced;
  kind.make = [domain, pid, path = kind.path]() -> Result<MadeObject> {
    view::ViewStatus status;
    status.pid = pid;
    status.domain = domain;
    if (Status st = view::write_status_file(path, status); !st.ok()) return st;
    return MadeObject{path, nullptr};
  };
  kind.open = [](const std::string& path) { return view::read_status_file(path).status(); };
  kind.listing_problems = [domain] {
    auto listing = view::read_status_files(view::kDefaultStatusDirectory, domain);
    return listing ? listing->problems : std::vector<std::string>{listing.message()};
  };
  return kind;
}

}  // namespace cerulion::test
