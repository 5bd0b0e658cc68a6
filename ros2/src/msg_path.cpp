// SPDX-License-Identifier: Apache-2.0
// rosbag2's LocalMessageDefinitionSource is the model: a type's dependencies are the non-primitive
// type names at the start of its lines ("pkg/T", or "T" of its own package), taken in name order,
// depth first, each once across the whole schema.

#include "cerulion/ros2/msg_path.hpp"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "cerulion/ros2/msg_definition.hpp"
#include "cerulion/ros2/type_name.hpp"

namespace cerulion::ros2 {
namespace {

constexpr std::string_view kDelimiter =
    "================================================================================\n";
/// The most levels of nesting followed (rosbag2 stops at 50 too).
constexpr int kMaxDepth = 50;

bool is_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void add_list(std::vector<std::string>& out, const char* list, std::string_view suffix = {}) {
  if (!list) return;
  std::string_view rest = list;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) out.push_back(std::string(dir) + std::string(suffix));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
}

/// The type names a .msg text uses as rosbag2 finds them: "pkg/T" as spelled, "T" as "package/T".
std::set<std::string> spelled_dependencies(std::string_view text, std::string_view package) {
  static const std::set<std::string, std::less<>> primitives = {
      "bool",  "byte",   "char",  "float32", "float64", "int8",   "uint8",  "int16",
      "uint16", "int32", "uint32", "int64",  "uint64",  "string", "wstring", "time", "duration"};
  std::set<std::string> out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::size_t i = line.find_first_not_of(" \t\r");
    if (i == std::string::npos) continue;
    std::size_t end = i;
    while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_' || line[end] == '/')) ++end;
    if (end == i) continue;
    if (end < line.size() && line[end] == '[') end = line.find(']', end) == std::string::npos ? line.size() : line.find(']', end) + 1;
    if (end >= line.size() || (line[end] != ' ' && line[end] != '\t')) continue;
    std::string type = line.substr(i, line.find('[', i) < end ? line.find('[', i) - i : end - i);
    if (primitives.count(type)) continue;
    out.insert(type.find('/') == std::string::npos ? std::string(package) + "/" + type : type);
  }
  return out;
}

Result<std::string> read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status(ErrorCode::NotFound, "cannot read " + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

MsgPath MsgPath::from_environment(std::vector<std::string> given) {
  MsgPath path{std::move(given)};
  add_list(path.directories, std::getenv("CERULION_MSG_PATH"));
  add_list(path.directories, std::getenv("AMENT_PREFIX_PATH"));
  return path;
}

std::optional<std::string> MsgPath::find(std::string_view type_name) const {
  auto name = parse_type_name(type_name);
  if (!name) return std::nullopt;
  for (const auto& dir : directories) {
    for (const char* middle : {"/share/", "/"}) {
      std::string file = dir + middle + name->package + "/msg/" + name->name + ".msg";
      if (is_file(file)) return file;
    }
  }
  return std::nullopt;
}

std::string MsgPath::describe() const {
  if (directories.empty()) return "(empty)";
  std::string out;
  for (const auto& d : directories) out += (out.empty() ? "" : ":") + d;
  return out;
}

Result<Schema> load_schema(const MsgPath& path, std::string_view type_name) {
  auto root = parse_type_name(type_name);
  if (!root) return root.status();
  std::set<std::string> seen;
  std::function<Result<std::string>(const TypeName&, const std::string&, int)> text_of =
      [&](const TypeName& type, const std::string& used_by, int depth) -> Result<std::string> {
    if (depth > kMaxDepth) return Status(ErrorCode::InvalidArgument, type.full() + ": types nest too deep (a cycle?)");
    std::string text;
    if (auto file = path.find(type.full())) {
      auto read = read_text(*file);
      if (!read) return read.status();
      // Checked here so that a malformed file is named by its path, line and column.
      if (auto parsed = parse_message(type.full(), *read, *file); !parsed) return parsed.status();
      text = std::move(*read);
    } else if (type.package == "builtin_interfaces" && (type.name == "Time" || type.name == "Duration")) {
      text = "int32 sec\nuint32 nanosec\n";
    } else {
      return Status(ErrorCode::NotFound, "no .msg file for " + type.full() + used_by + " on the msg path (" +
                                             path.describe() + ")");
    }
    std::string out = text;
    for (const auto& dep : spelled_dependencies(text, type.package)) {
      if (!seen.insert(dep).second) continue;
      auto dep_type = parse_reference(dep, type.package);
      if (!dep_type) return dep_type.status();
      auto dep_text = text_of(*dep_type, " (used by " + type.full() + ")", depth + 1);
      if (!dep_text) return dep_text.status();
      out += "\n" + std::string(kDelimiter) + "MSG: " + dep + "\n" + *dep_text;
    }
    return out;
  };
  auto text = text_of(*root, "", 0);
  if (!text) return text.status();
  return Schema{root->full(), "ros2msg", std::move(*text)};
}

}  // namespace cerulion::ros2
