// SPDX-License-Identifier: Apache-2.0
// Flashback's kind of object in /dev/shm, for the hostile cases: a keeper's store.


#include "cerulion/flashback/store.hpp"
#include "cerulion/core/detail/shm_file.hpp"
#include "process.hpp"
#include "shm_objects.hpp"

namespace cerulion::test {

ShmObjectKind flashback_store_kind() {
  const std::string domain = unique_domain("hostile");
  ShmObjectKind kind;
  kind.noun = std::string(detail::kFlashbackStore.noun);
  kind.prefix = std::string(detail::kFlashbackStore.prefix);
  kind.path = "/dev/shm/" + flashback::store_file_name(domain, "planted");
  kind.make = [domain, path = kind.path]() -> Result<MadeObject> {
    auto store = flashback::Store::open_for_keeper(domain, "planted", {.memory_bytes = 4 << 20});
    if (!store) return store.status();
    return MadeObject{path, std::make_shared<flashback::Store>(std::move(*store))};
  };
  kind.open = [domain](const std::string&) { return flashback::Store::open(domain, "planted").status(); };
  kind.listing_problems = [domain] {
    std::vector<std::string> problems;
    for (const auto& entry : flashback::list_stores(domain)) {
      if (!entry.problem.empty()) problems.push_back(entry.problem);
    }
    return problems;
  };
  return kind;
}

}  // namespace cerulion::test
