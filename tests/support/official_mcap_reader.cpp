// SPDX-License-Identifier: Apache-2.0
#include "official_mcap_reader.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "cerulion/core/detail/shm_header.hpp"

namespace cerulion::test {

namespace fs = std::filesystem;

std::optional<fs::path> official_mcap_reader(std::string& why) {
  if (std::system("command -v node > /dev/null 2>&1 && command -v npm > /dev/null 2>&1") != 0) {
    why = "node/npm not installed";
    return std::nullopt;
  }
  const fs::path dir = fs::path(CERULION_TEST_NPM_INSTALL_DIR);
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const char* f : {"package.json", "read_indexed.mjs"}) {
    fs::copy_file(fs::path(CERULION_TEST_NPM_DIR) / f, dir / f, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      why = "cannot copy " + std::string(f) + " into " + dir.string() + ": " + ec.message();
      return std::nullopt;
    }
  }
  if (fs::exists(dir / "node_modules" / "@mcap" / "core") && fs::exists(dir / "node_modules" / "fzstd")) return dir;
  const std::string cmd = "cd '" + dir.string() +
                          "' && timeout 180 npm install --no-audit --no-fund --no-save --loglevel=error > npm-install.log 2>&1";
  if (std::system(cmd.c_str()) != 0) {
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
