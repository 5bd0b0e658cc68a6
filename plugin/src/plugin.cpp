// SPDX-License-Identifier: Apache-2.0
#include "cerulion/plugin/plugin.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>

namespace cerulion::plugin {
namespace {

namespace fs = std::filesystem;

// Whether `path` lies inside `root` (both absolute; /proc/self/exe is resolved already).
bool is_inside(const fs::path& path, const fs::path& root) {
  std::error_code ec;
  const fs::path canonical_root = fs::weakly_canonical(root, ec);
  if (ec) return false;
  const fs::path relative = path.lexically_relative(canonical_root);
  return !relative.empty() && *relative.begin() != "..";
}

Result<const void*> open_table(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status(ErrorCode::NotFound, "plugin '" + path + "' is missing (CERULION_PLUGIN_DIR names another place)",
                  Subject::path(path));
  }
  // dlopen would block on a FIFO until someone writes to it.
  if (!S_ISREG(st.st_mode)) {
    return Status(ErrorCode::InvalidArgument, "plugin '" + path + "' is not a regular file", Subject::path(path));
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Status(ErrorCode::SystemError, std::string("cannot load plugin: ") + (why ? why : path), Subject::path(path));
  }
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kEntrySymbol));
  const void* table = entry ? entry(kBuild) : nullptr;
  if (table == nullptr) {
    // Left loaded: unloading a library whose constructors ran is not always safe.
    return Status(ErrorCode::Incompatible,
                  "plugin '" + path + "' comes from another cerulion build than this " + kBuild + " one",
                  Subject::path(path));
  }
  return table;
}

}  // namespace

std::string directory() {
  if (const char* dir = std::getenv("CERULION_PLUGIN_DIR"); dir != nullptr && *dir != '\0') return dir;
  std::error_code ec;
  const fs::path program = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return CERULION_PLUGIN_INSTALL_DIR;
  const fs::path installed = (program.parent_path() / CERULION_PLUGIN_RELATIVE_DIR).lexically_normal();
  if (fs::is_directory(installed, ec)) return installed;
  if (is_inside(program, CERULION_PLUGIN_BUILD_ROOT)) return CERULION_PLUGIN_BUILD_DIR;
  return installed;
}

Result<const void*> load_table(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, Result<const void*>, std::less<>> loaded;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(name); it != loaded.end()) return it->second;
  const std::string path = directory() + "/" + std::string(name) + ".so";
  auto table = open_table(path);
  loaded.emplace(std::string(name), table);
  return table;
}

}  // namespace cerulion::plugin
