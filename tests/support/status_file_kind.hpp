// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kinds of status file that running processes keep in /dev/shm (a bridge's, a view server's),
// described for the hostile cases (shm_objects.hpp) one way: each component passes its functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <unistd.h>

#include "cerulion/core/detail/shm_file.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

namespace cerulion::test {

/// A component's status-file functions (status.hpp of bridge/ and view/).
template <class S, class Listing>
struct StatusFileFunctions {
  std::string (*path)(std::string_view directory, std::string_view domain, std::uint32_t pid);
  Status (*write)(const std::string& path, const S& status);
  Result<S> (*read)(const std::string& path);
  Result<Listing> (*list)(std::string_view directory, std::string_view domain);
  std::string_view directory;
};

/// The kind, for a domain of the test's own: `status` is written as this process's, which is alive,
/// so that its file is read rather than removed.
template <class S, class Listing>
ShmObjectKind status_file_kind(const detail::ShmKind& shm, StatusFileFunctions<S, Listing> f, S status) {
  const std::string domain = unique_domain("hostile");
  status.pid = static_cast<std::uint32_t>(::getpid());
  status.domain = domain;
  ShmObjectKind kind;
  kind.noun = std::string(shm.noun);
  kind.prefix = std::string(shm.prefix);
  kind.path = f.path(f.directory, domain, status.pid);
  kind.in_its_place = InItsPlace::Replaced;
  kind.make = [f, status, path = kind.path]() -> Result<MadeObject> {
    if (Status st = f.write(path, status); !st.ok()) return st;
    return MadeObject{path, nullptr};
  };
  kind.open = [f](const std::string& path) { return f.read(path).status(); };
  kind.listing_problems = [f, domain] {
    auto listing = f.list(f.directory, domain);
    return listing ? listing->problems : std::vector<std::string>{listing.message()};
  };
  return kind;
}

}  // namespace cerulion::test
