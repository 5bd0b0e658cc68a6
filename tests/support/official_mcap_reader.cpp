// SPDX-License-Identifier: Apache-2.0
#include "official_mcap_reader.hpp"

#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "cerulion/core/detail/shm_header.hpp"
#include "npm_packages.hpp"

namespace cerulion::test {

namespace fs = std::filesystem;

std::optional<fs::path> official_mcap_reader(std::string& why) {
  if (!node_and_npm()) {
    why = "node/npm not installed";
    return std::nullopt;
  }
  const fs::path dir = fs::path(CERULION_TEST_NPM_INSTALL_DIR);
  if (!npm_install(CERULION_TEST_NPM_DIR, dir, {"package.json", "read_indexed.mjs"}, {"@mcap/core", "fzstd"})) {
    why = "npm registry unreachable (could not install @mcap/core; see " + (dir / "npm-install.log").string() + ")";
    return std::nullopt;
  }
  return dir;
}

OfficialRead read_with_official_reader(const fs::path& reader, const std::vector<std::string>& files) {
  OfficialRead out;
  const fs::path printed = reader / ("read-" + std::to_string(::getpid()) + ".jsonl");
  std::string cmd = "cd '" + reader.string() + "' && timeout 300 node read_indexed.mjs";
  for (const auto& f : files) cmd += " '" + f + "'";
  cmd += " > '" + printed.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  out.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream in(printed);
  std::ostringstream all;
  all << in.rdbuf();
  out.output = all.str();
  fs::remove(printed);
  std::istringstream lines(out.output);
  for (std::string line; std::getline(lines, line);) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) out.files.push_back(std::move(parsed));
  }
  return out;
}

std::uint32_t official_reader_digest(std::span<const std::byte> data) {
  return cerulion::detail::fnv1a(data.data(), data.size());
}

}  // namespace cerulion::test
