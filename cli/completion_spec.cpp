// SPDX-License-Identifier: Apache-2.0
// The command line as the parser defines it, read into CommandSpecs for the completion scripts.

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "completion_spec.hpp"

namespace cerulion::cli::completion {
namespace {

std::vector<std::string> choices_of(const std::string& type_name) {
  std::vector<std::string> out;
  auto open = type_name.find('{');
  auto close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return out;
  std::stringstream ss(type_name.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

bool takes_many(const CLI::Option* opt) {
  return opt->get_items_expected_max() >= CLI::detail::expected_max_vector_size / 16 && opt->get_allow_extra_args();
}

// What an option's value is, from its long name (and, for --topics, whether the command reads a file).
// An option whose help begins "Topic " takes a topic whatever its name (verify's --input and
// --output): a topic of the command's recording when it reads one.
ValueKind option_kind(const std::string& lname, bool command_reads_file, const std::string& description) {
  if (description.rfind("Topic ", 0) == 0) return command_reads_file ? ValueKind::RecordingTopic : ValueKind::Topic;
  // flashback's --name (its help begins "Keeper"): the stores there are.
  if (lname == "name" && description.rfind("Keeper", 0) == 0) return ValueKind::Keeper;
  static const std::set<std::string> files = {"file", "schema-file", "output", "samples-out", "out", "json",
                                              "markdown", "html", "baseline", "from"};
  static const std::set<std::string> directories = {"dir", "samples-dir"};
  static const std::set<std::string> topics = {"force", "topics", "trigger-topic"};
  if (files.count(lname)) return ValueKind::File;
  if (directories.count(lname)) return ValueKind::Directory;
  if (topics.count(lname)) {
    return lname == "topics" && command_reads_file ? ValueKind::RecordingTopic : ValueKind::Topic;
  }
  return ValueKind::None;
}

// What a positional is, from its name, and for a file from its description: the commands that read
// a recording (info, play, recover) describe it as an MCAP file.
ValueKind positional_kind(const std::string& name, const std::string& description) {
  if (name == "command") return ValueKind::Command;
  if (name.find("topic") != std::string::npos) return ValueKind::Topic;
  if (name.find("file") != std::string::npos || name.find("input") != std::string::npos) {
    return description.find("MCAP") != std::string::npos ? ValueKind::Recording : ValueKind::File;
  }
  return ValueKind::None;
}

}  // namespace

void collect(const CLI::App* app, const std::string& path, bool hidden, std::vector<CommandSpec>& out) {
  CommandSpec spec;
  spec.path = path;
  spec.hidden = hidden;
  spec.description = app->get_description();
  for (const CLI::Option* opt : app->get_options()) {
    if (opt->get_group().empty() || opt->nonpositional()) continue;
    PositionalSpec p;
    p.name = opt->get_name();
    p.many = opt->get_items_expected_max() > 1;
    p.choices = choices_of(opt->get_type_name());
    p.kind = p.choices.empty() ? positional_kind(p.name, opt->get_description()) : ValueKind::Choices;
    spec.positionals.push_back(p);
  }
  bool reads_file = file_positional(spec) >= 0;
  for (const CLI::Option* opt : app->get_options()) {
    if (opt->get_group().empty() || !opt->nonpositional()) continue;
    OptionSpec o;
    for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
    o.description = opt->get_description();
    o.takes_value = opt->get_items_expected_min() > 0;
    if (o.takes_value) {
      o.many = takes_many(opt);
      o.choices = choices_of(opt->get_type_name());
      std::string lname = opt->get_lnames().empty() ? "" : opt->get_lnames().front();
      o.kind = o.choices.empty() ? option_kind(lname, reads_file, o.description) : ValueKind::Choices;
    }
    spec.options.push_back(o);
  }
  const auto subs = app->get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* sub : subs) {
    (sub->get_group().empty() ? spec.hidden_children : spec.children).push_back(sub->get_name());
  }
  out.push_back(spec);
  for (const CLI::App* sub : subs) {
    collect(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), hidden || sub->get_group().empty(), out);
  }
}

const CommandSpec* find_spec(const std::vector<CommandSpec>& specs, const std::string& path) {
  for (const auto& c : specs)
    if (c.path == path) return &c;
  return nullptr;
}

std::vector<OptionSpec> accepted_options(const std::vector<CommandSpec>& specs, const CommandSpec& c) {
  std::vector<OptionSpec> out = c.options;
  std::set<std::string> seen;
  for (const auto& o : out) seen.insert(o.names.begin(), o.names.end());
  std::string path = c.path;
  while (!path.empty()) {
    auto sp = path.rfind(' ');
    path = sp == std::string::npos ? "" : path.substr(0, sp);
    const CommandSpec* parent = find_spec(specs, path);
    if (!parent) continue;
    for (const auto& o : parent->options) {
      if (!o.takes_value) continue;  // parent flags (--help, --version) are not worth offering again
      bool clash = std::any_of(o.names.begin(), o.names.end(), [&](const std::string& n) { return seen.count(n) > 0; });
      if (clash) continue;
      seen.insert(o.names.begin(), o.names.end());
      out.push_back(o);
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string escape_single(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out;
}

int file_positional(const CommandSpec& c) {
  for (std::size_t i = 0; i < c.positionals.size(); ++i)
    if (c.positionals[i].kind == ValueKind::Recording) return static_cast<int>(i);
  return -1;
}

}  // namespace cerulion::cli::completion
