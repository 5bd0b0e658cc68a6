// SPDX-License-Identifier: Apache-2.0
#pragma once
// npm packages for tests that check cerulion against an independent implementation (@mcap/core,
// @foxglove/ws-protocol): pinned in a package.json beside the test, installed into the build tree
// once, and skipped (with a message naming the log) where npm or its registry is not there.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace cerulion::test {

/// Whether node and npm are on PATH.
inline bool node_and_npm() {
  return std::system("command -v node > /dev/null 2>&1 && command -v npm > /dev/null 2>&1") == 0;
}

/// Copies `files` (package.json and the scripts) from `source` into `dir`, and installs the
/// packages there unless every one of `packages` (paths under node_modules) is there already.
/// False when npm could not; its output is in dir/npm-install.log.
inline bool npm_install(const std::filesystem::path& source, const std::filesystem::path& dir,
                        const std::vector<std::string>& files, const std::vector<std::string>& packages) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  for (const auto& f : files) fs::copy_file(source / f, dir / f, fs::copy_options::overwrite_existing);
  bool installed = true;
  for (const auto& p : packages) installed = installed && fs::exists(dir / "node_modules" / p);
  if (installed) return true;
  const std::string cmd = "cd '" + dir.string() +
                          "' && timeout 180 npm install --no-audit --no-fund --no-save --loglevel=error > npm-install.log 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace cerulion::test
