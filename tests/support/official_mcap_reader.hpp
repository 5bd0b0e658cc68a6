// SPDX-License-Identifier: Apache-2.0
#pragma once
// The official TypeScript MCAP reader (npm's @mcap/core, pinned in tests/support/npm/package.json),
// for tests that want files read back by an implementation other than ours. npm installs it once
// into the build tree; without node, npm or the registry the tests that need it skip, saying why.
//
//   std::string why;
//   auto reader = cerulion::test::official_mcap_reader(why);
//   if (!reader) { WARN("skipped: " << why); return; }
//   auto read = cerulion::test::read_with_official_reader(*reader, {"a.mcap", "b.mcap"});

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cerulion::test {

/// The folder the reader is installed in; nullopt with `why` when it cannot be (node or npm not
/// installed, the npm registry out of reach).
std::optional<std::filesystem::path> official_mcap_reader(std::string& why);

/// What the reader made of each of `files`, in their order: one object per file (read_indexed.mjs
/// says which keys), or {"file", "error"} where it failed. All files in one run of node.
struct OfficialRead {
  std::vector<nlohmann::json> files;
  int exit_code = 0;
  std::string output;  ///< all it printed, for a failure's message
};
OfficialRead read_with_official_reader(const std::filesystem::path& reader, const std::vector<std::string>& files);

/// The digest read_indexed.mjs gives each message's data (core's FNV-1a), to compare messages.
std::uint32_t official_reader_digest(std::span<const std::byte> data);

}  // namespace cerulion::test
