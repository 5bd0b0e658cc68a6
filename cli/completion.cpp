// SPDX-License-Identifier: Apache-2.0
// `cerulion completion bash|zsh|fish`: shell completion scripts generated from the very option
// definitions the parser uses, so they cannot drift from the program. The files in completions/
// are this command's output (a test compares them). What a word means (a flag, an option and its
// value, a positional) comes from the parser, per command: `record --force` is a flag,
// `clean --force TOPIC` takes a topic. `cerulion completion --topics-in FILE` (hidden) prints the
// topics of a recording, one a line, for `play FILE --topics <TAB>`.

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/core.h>

#ifdef CERULION_HAVE_RECORDER
#include "cerulion/recorder/reader.hpp"
#endif
#include "command.hpp"

namespace cerulion::cli {
namespace {

/// What a value (of an option or a positional) is, so the shells can offer the right words.
enum class ValueKind {
  None,             ///< free text: nothing to offer
  Choices,          ///< one of `choices`
  File,             ///< a path
  Directory,        ///< a directory
  Topic,            ///< a live topic of the domain
  RecordingTopic,   ///< a topic of the recording named by the command's file positional
  Command,          ///< a command path (`help topic hz`)
};

struct OptionSpec {
  std::vector<std::string> names;  ///< "-s", "--size"
  std::string description;
  bool takes_value = false;
  bool many = false;  ///< takes every following word up to the next option (`play --topics /a /b`)
  ValueKind kind = ValueKind::None;
  std::vector<std::string> choices;
};

struct PositionalSpec {
  std::string name;
  ValueKind kind = ValueKind::None;
  bool many = false;  ///< takes the remaining words
  std::vector<std::string> choices;
};

struct CommandSpec {
  std::string path;  ///< "ping", "topic list"; "" for the top level
  std::string description;
  bool hidden = false;  ///< not offered (`completion`), yet its arguments complete
  std::vector<OptionSpec> options;
  std::vector<std::string> children;         ///< visible subcommands
  std::vector<std::string> hidden_children;  ///< recognized, never offered
  std::vector<PositionalSpec> positionals;
};

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
ValueKind option_kind(const std::string& lname, bool command_reads_file) {
  static const std::set<std::string> files = {"file", "schema-file", "output", "samples-out", "out", "json",
                                              "markdown", "html", "baseline"};
  static const std::set<std::string> directories = {"dir", "samples-dir"};
  static const std::set<std::string> topics = {"force", "topics", "trigger-topic"};
  if (files.count(lname)) return ValueKind::File;
  if (directories.count(lname)) return ValueKind::Directory;
  if (topics.count(lname)) {
    return lname == "topics" && command_reads_file ? ValueKind::RecordingTopic : ValueKind::Topic;
  }
  return ValueKind::None;
}

ValueKind positional_kind(const std::string& name) {
  if (name == "command") return ValueKind::Command;
  if (name.find("topic") != std::string::npos) return ValueKind::Topic;
  if (name.find("file") != std::string::npos || name.find("input") != std::string::npos) return ValueKind::File;
  return ValueKind::None;
}

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
    p.kind = p.choices.empty() ? positional_kind(p.name) : ValueKind::Choices;
    spec.positionals.push_back(p);
  }
  bool reads_file = std::any_of(spec.positionals.begin(), spec.positionals.end(),
                                [](const PositionalSpec& p) { return p.kind == ValueKind::File; });
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
      o.kind = o.choices.empty() ? option_kind(lname, reads_file) : ValueKind::Choices;
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

// The options a command accepts: its own, then those of the commands above it that it does not
// redefine (the parser falls through to them: `cerulion topic list --domain x`).
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

std::string join(const std::vector<std::string>& v, const std::string& sep = " ") {
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

// Index of the command's first file positional (the recording play reads), -1 if none.
int file_positional(const CommandSpec& c) {
  for (std::size_t i = 0; i < c.positionals.size(); ++i)
    if (c.positionals[i].kind == ValueKind::File) return static_cast<int>(i);
  return -1;
}

// The bash statement completing `$cur` as a value of `kind`.
std::string bash_value(ValueKind kind, const std::vector<std::string>& choices, const CommandSpec& c) {
  switch (kind) {
    case ValueKind::Choices: return "COMPREPLY=($(compgen -W '" + join(choices) + "' -- \"$cur\"))";
    case ValueKind::File: return "_cerulion_files";
    case ValueKind::Directory: return "_cerulion_files -d";
    case ValueKind::Topic: return "_cerulion_match < <(_cerulion_topics)";
    case ValueKind::RecordingTopic:
      return "_cerulion_match < <(_cerulion_recording_topics \"${pos[" + std::to_string(std::max(0, file_positional(c))) +
             "]}\")";
    case ValueKind::Command: return "COMPREPLY=($(compgen -W \"$(_cerulion_help_words \"${pos[*]}\")\" -- \"$cur\"))";
    case ValueKind::None: break;
  }
  return "COMPREPLY=()";
}

std::string bash_script(const std::vector<CommandSpec>& specs, const std::vector<std::string>& tops) {
  std::string s = "# bash completion for cerulion -- generated by `cerulion completion bash`; do not edit.\n\n";
  s += "# The live topics of the domain (--domain on the line, else $CERULION_DOMAIN, else default).\n"
       "_cerulion_topics() {\n"
       "  local domain=${CERULION_DOMAIN:-default} i\n"
       "  for ((i=1; i<${#COMP_WORDS[@]}-1; i++)); do\n"
       "    [[ ${COMP_WORDS[i]} == --domain ]] && domain=$(_cerulion_dequote \"${COMP_WORDS[i+1]}\")\n"
       "  done\n"
       "  local f\n"
       "  for f in /dev/shm/cerulion.\"$domain\":*; do\n"
       "    [[ -e $f ]] || continue\n"
       "    f=${f#/dev/shm/cerulion.\"$domain\"}\n"
       "    printf '%s\\n' \"${f//:/\\/}\"\n"
       "  done\n"
       "}\n\n"
       "# A word as typed (quotes, backslashes, ~/) as the shell will pass it.\n"
       "_cerulion_dequote() {\n"
       "  local w=$1 out=\"\" i c\n"
       "  case $w in\n"
       "    \\'*\\') out=${w:1:${#w}-2} ;;\n"
       "    \\\"*\\\") out=${w:1:${#w}-2} ;;\n"
       "    *) for ((i=0; i<${#w}; i++)); do\n"
       "         c=${w:i:1}\n"
       "         [[ $c == \\\\ ]] && { ((i++)); c=${w:i:1}; }\n"
       "         out+=$c\n"
       "       done ;;\n"
       "  esac\n"
       "  [[ $out == '~/'* ]] && out=$HOME/${out:2}\n"
       "  printf '%s' \"$out\"\n"
       "}\n\n"
       "# The topics a recording holds, asked of the cerulion being completed.\n"
       "_cerulion_recording_topics() {\n"
       "  local file prog\n"
       "  file=$(_cerulion_dequote \"$1\")\n"
       "  [[ -n $file ]] || return\n"
       "  prog=$(_cerulion_dequote \"${COMP_WORDS[0]}\")\n"
       "  if [[ ${prog##*/} == cerulion-* ]]; then\n"
       "    [[ $prog == */* ]] && prog=${prog%/*}/cerulion || prog=cerulion\n"
       "  fi\n"
       "  \"$prog\" completion --topics-in \"$file\" 2>/dev/null\n"
       "}\n\n"
       "# COMPREPLY: the lines of stdin that start with $cur, but none already given (no topic twice).\n"
       "_cerulion_match() {\n"
       "  local line p\n"
       "  COMPREPLY=()\n"
       "  while IFS= read -r line; do\n"
       "    [[ -n $line && $line == \"$cur\"* ]] || continue\n"
       "    for p in \"${pos[@]}\" \"${vals[@]}\"; do [[ $p == \"$line\" ]] && continue 2; done\n"
       "    COMPREPLY+=(\"$line\")\n"
       "  done\n"
       "}\n\n"
       "_cerulion_files() {\n"
       "  local IFS=$'\\n'\n"
       "  compopt -o filenames 2>/dev/null\n"
       "  COMPREPLY=($(compgen ${1:--f} -- \"$cur\"))\n"
       "}\n\n"
       "# The commands `cerulion help WORDS...` can name next.\n"
       "_cerulion_help_words() {\n"
       "  case \"$1\" in\n";
  for (const auto& c : specs) {
    if (c.hidden || c.children.empty()) continue;
    s += "    \"" + c.path + "\") echo '" + join(c.children) + "' ;;\n";
  }
  s += "  esac\n"
       "}\n\n";
  s += "_cerulion() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  local cmd=\"\" i w vopt=\"\"\n"
       "  local -a pos=() vals=()\n"
       "  local base=${COMP_WORDS[0]##*/}\n"
       "  [[ $base == cerulion-* ]] && cmd=${base#cerulion-}\n"
       "  # Walk the words before the cursor: the command path, options (and their values), positionals.\n"
       "  for ((i=1; i<COMP_CWORD; i++)); do\n"
       "    w=${COMP_WORDS[i]}\n"
       "    case \"$cmd|$w\" in\n";
  std::vector<std::string> single, many;
  for (const auto& c : specs) {
    for (const auto& o : accepted_options(specs, c)) {
      if (!o.takes_value) continue;
      for (const auto& n : o.names) (o.many ? many : single).push_back("\"" + c.path + "|" + n + "\"");
    }
  }
  if (!single.empty()) s += "      " + join(single, "|") + ") ((i++)); vopt=\"\"; continue ;;\n";
  if (!many.empty()) s += "      " + join(many, "|") + ") vopt=$w; continue ;;\n";
  s += "    esac\n"
       "    [[ $w == -* ]] && { vopt=\"\"; continue; }\n"
       "    [[ -n $vopt ]] && { vals+=(\"$w\"); continue; }\n"
       "    case \"$cmd\" in\n";
  for (const auto& c : specs) {
    std::vector<std::string> all = c.children;
    all.insert(all.end(), c.hidden_children.begin(), c.hidden_children.end());
    if (all.empty()) continue;
    s += "      \"" + c.path + "\") case $w in " + join(all, "|") + ") cmd=\"" + (c.path.empty() ? "" : c.path + " ") +
         "$w\"; pos=(); continue ;; esac ;;\n";
  }
  s += "    esac\n"
       "    pos+=(\"$w\")\n"
       "  done\n"
       "  # The value of the option before the cursor.\n"
       "  case \"$cmd|$prev\" in\n";
  for (const auto& c : specs) {
    for (const auto& o : accepted_options(specs, c)) {
      if (!o.takes_value) continue;
      std::vector<std::string> patterns;
      for (const auto& n : o.names) patterns.push_back("\"" + c.path + "|" + n + "\"");
      s += "    " + join(patterns, "|") + ") " + bash_value(o.kind, o.choices, c) + "; return ;;\n";
    }
  }
  s += "  esac\n"
       "  # More values of an option that takes several (`play FILE --topics /a /b`).\n"
       "  if [[ -n $vopt && $cur != -* ]]; then\n"
       "    case \"$cmd|$vopt\" in\n";
  for (const auto& c : specs) {
    for (const auto& o : accepted_options(specs, c)) {
      if (!o.many) continue;
      std::vector<std::string> patterns;
      for (const auto& n : o.names) patterns.push_back("\"" + c.path + "|" + n + "\"");
      s += "      " + join(patterns, "|") + ") " + bash_value(o.kind, o.choices, c) + "; return ;;\n";
    }
  }
  s += "    esac\n"
       "  fi\n"
       "  # Options; else subcommands; else the positional the cursor is at.\n"
       "  local words=\"\"\n"
       "  case \"$cmd\" in\n";
  for (const auto& c : specs) {
    std::vector<std::string> options;
    for (const auto& o : c.options)
      for (const auto& n : o.names) options.push_back(n);
    s += "    \"" + c.path + "\")\n      words='" + join(options) + "'\n";
    s += "      [[ $cur == -* ]] && { COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")); return; }\n";
    if (!c.children.empty()) {
      s += "      COMPREPLY=($(compgen -W '" + join(c.children) + "' -- \"$cur\")); return ;;\n";
      continue;
    }
    if (!c.positionals.empty()) {
      s += "      case ${#pos[@]} in\n";
      for (std::size_t k = 0; k < c.positionals.size(); ++k) {
        const auto& p = c.positionals[k];
        bool last = k + 1 == c.positionals.size();
        std::string label = last && p.many ? "*" : std::to_string(k);
        if (p.kind == ValueKind::None) {
          s += "        " + label + ") COMPREPLY=(); return ;;\n";
        } else {
          s += "        " + label + ") " + bash_value(p.kind, p.choices, c) + "; return ;;\n";
        }
      }
      s += "      esac ;;\n";
    } else {
      s += "      ;;\n";
    }
  }
  s += "  esac\n"
       "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "}\n";
  s += "complete -F _cerulion cerulion";
  for (const auto& t : tops) s += " cerulion-" + t;
  s += "\n";
  return s;
}

std::string zsh_fn(const std::string& path) {
  std::string fn = "_cerulion_cmd";
  for (char ch : path) fn += (ch == ' ' || ch == '-') ? '_' : ch;
  return fn;
}

std::string zsh_action(ValueKind kind, const std::vector<std::string>& choices) {
  switch (kind) {
    case ValueKind::Choices: return "(" + join(choices) + ")";
    case ValueKind::File: return "_files";
    case ValueKind::Directory: return "_files -/";
    case ValueKind::Topic: return "_cerulion_topics";
    case ValueKind::RecordingTopic: return "_cerulion_recording_topics";
    case ValueKind::Command: return "_cerulion_help_commands";
    case ValueKind::None: break;
  }
  return " ";
}

std::string zsh_script(const std::vector<CommandSpec>& specs, const std::vector<std::string>& tops) {
  std::string s = "#compdef cerulion";
  for (const auto& t : tops) s += " cerulion-" + t;
  s += "\n# zsh completion for cerulion -- generated by `cerulion completion zsh`; do not edit.\n\n";
  s += "_cerulion_topics() {\n"
       "  local domain=${CERULION_DOMAIN:-default} f i\n"
       "  i=${_cerulion_words[(I)--domain]}\n"
       "  (( i > 0 )) && domain=${(Q)_cerulion_words[i+1]}\n"
       "  local -a topics\n"
       "  for f in /dev/shm/cerulion.${domain}:*(N); do topics+=(${${f#/dev/shm/cerulion.${domain}}//:/\\/}); done\n"
       "  _describe 'topic' topics\n"
       "}\n\n"
       "# The topics of the recording named on the line (its first positional), asked of cerulion.\n"
       "_cerulion_recording_topics() {\n"
       "  local file=${(Q)line[1]} prog=${(Q)_cerulion_words[1]}\n"
       "  [[ $file == '~/'* ]] && file=$HOME/${file#\\~/}\n"
       "  [[ ${prog:t} == cerulion-* ]] && prog=${prog:h}/cerulion\n"
       "  [[ $prog == ./cerulion ]] && prog=cerulion\n"
       "  local -a topics\n"
       "  topics=(${(f)\"$($prog completion --topics-in $file 2>/dev/null)\"})\n"
       "  _describe 'topic' topics\n"
       "}\n\n"
       "# `cerulion help WORDS...`: the commands the words so far can be followed by.\n"
       "_cerulion_help_commands() {\n"
       "  local -a names\n"
       "  case \"${(j: :)words[2,CURRENT-1]}\" in\n";
  // In _cerulion_cmdhelp, words[1] is `help` and words[2,CURRENT-1] the commands named so far.
  for (const auto& c : specs) {
    if (c.hidden || c.children.empty()) continue;
    s += "    \"" + c.path + "\") names=(" + join(c.children) + ") ;;\n";
  }
  s += "  esac\n"
       "  _describe 'command' names\n"
       "}\n\n";
  for (const auto& c : specs) {
    std::string fn = zsh_fn(c.path);
    s += fn + "() {\n";
    s += "  local -a args\n  args=(\n";
    for (const auto& o : c.options) {
      std::string desc = escape_single(o.description);
      std::replace(desc.begin(), desc.end(), '[', '(');
      std::replace(desc.begin(), desc.end(), ']', ')');
      std::string action;
      if (o.takes_value) action = ":value:" + zsh_action(o.kind, o.choices);
      if (o.names.size() == 1) {
        s += "    '" + o.names[0] + "[" + desc + "]" + action + "'\n";
      } else {
        s += "    '(" + join(o.names) + ")'{" + join(o.names, ",") + "}'[" + desc + "]" + action + "'\n";
      }
    }
    s += "  )\n";
    std::vector<std::string> all = c.children;
    all.insert(all.end(), c.hidden_children.begin(), c.hidden_children.end());
    if (!all.empty()) {
      s += "  local -a subcommands\n  subcommands=(\n";
      for (const auto& child : c.children) {
        const CommandSpec* cs = find_spec(specs, c.path.empty() ? child : c.path + " " + child);
        std::string d = cs ? escape_single(cs->description) : "";
        std::replace(d.begin(), d.end(), ':', ' ');
        s += "    '" + child + ":" + d + "'\n";
      }
      s += "  )\n";
      s += "  _arguments -C $args '1:command:->cmd' '*::arg:->args'\n"
           "  case $state in\n"
           "    cmd) _describe 'command' subcommands ;;\n"
           "    args) case $words[1] in\n";
      for (const auto& child : all) {
        s += "      " + child + ") " + zsh_fn(c.path.empty() ? child : c.path + " " + child) + " ;;\n";
      }
      s += "    esac ;;\n  esac\n";
    } else {
      s += "  _arguments $args";
      for (std::size_t k = 0; k < c.positionals.size(); ++k) {
        const auto& p = c.positionals[k];
        bool last = k + 1 == c.positionals.size();
        std::string label = last && p.many ? "*" : std::to_string(k + 1);
        s += " '" + label + ":" + p.name + ":" + zsh_action(p.kind, p.choices) + "'";
      }
      s += "\n";
    }
    s += "}\n\n";
  }
  s += "_cerulion() {\n"
       "  local -a _cerulion_words\n"
       "  _cerulion_words=(\"${words[@]}\")\n"
       "  local base=${words[1]:t}\n"
       "  if [[ $base == cerulion-* ]]; then\n"
       "    local sub=${base#cerulion-}\n"
       "    _cerulion_cmd${sub//-/_}\n"
       "  else\n"
       "    _cerulion_cmd\n"
       "  fi\n"
       "}\n\n_cerulion \"$@\"\n";
  return s;
}

std::string fish_script(const std::vector<CommandSpec>& specs) {
  std::string s = "# fish completion for cerulion -- generated by `cerulion completion fish`; do not edit.\n\n";
  s += "function __cerulion_topics\n"
       "    set -l domain default\n"
       "    set -q CERULION_DOMAIN; and set domain $CERULION_DOMAIN\n"
       "    set -l words (commandline -opc)\n"
       "    set -l i (contains -i -- --domain $words)\n"
       "    and set -q words[(math $i + 1)]\n"
       "    and set domain $words[(math $i + 1)]\n"
       "    for f in /dev/shm/cerulion.$domain:*\n"
       "        string replace -a ':' '/' (string replace \"/dev/shm/cerulion.$domain\" '' $f)\n"
       "    end\n"
       "end\n\n";
  // play's file is its first word that is neither an option nor an option's value.
  const CommandSpec* play = find_spec(specs, "play");
  std::vector<std::string> play_value_options;
  if (play)
    for (const auto& o : accepted_options(specs, *play))
      if (o.takes_value && !o.many) play_value_options.insert(play_value_options.end(), o.names.begin(), o.names.end());
  s += "# The topics of the recording `play` was given, asked of the cerulion being completed.\n"
       "function __cerulion_recording_topics\n"
       "    set -l words (commandline -opc)\n"
       "    set -l prog $words[1]\n"
       "    string match -q 'cerulion-*' -- (basename -- $prog); and set prog (dirname -- $prog)/cerulion\n"
       "    set -l skip 0\n"
       "    set -l many 0\n"
       "    for w in $words[2..-1]\n"
       "        if test $skip = 1\n"
       "            set skip 0\n"
       "        else if contains -- $w " + join(play_value_options) + "\n"
       "            set skip 1\n"
       "        else if string match -q -- '-*' $w\n"
       "            set many (string match -q -- '--topics' $w; and echo 1; or echo 0)\n"
       "        else if test $many = 0; and test $w != play\n"
       "            $prog completion --topics-in $w 2>/dev/null\n"
       "            return\n"
       "        end\n"
       "    end\n"
       "end\n\n";
  s += "complete -c cerulion -f\n";
  for (const auto& c : specs) {
    std::string cond;
    if (c.path.empty()) {
      cond = "__fish_use_subcommand";
    } else if (c.path.find(' ') == std::string::npos) {
      cond = "__fish_seen_subcommand_from " + c.path;
      if (!c.children.empty()) cond += "; and not __fish_seen_subcommand_from " + join(c.children);
    } else {
      auto sp = c.path.find(' ');
      cond = "__fish_seen_subcommand_from " + c.path.substr(0, sp) + "; and __fish_seen_subcommand_from " +
             c.path.substr(sp + 1);
    }
    for (const auto& child : c.children) {
      const CommandSpec* cs = find_spec(specs, c.path.empty() ? child : c.path + " " + child);
      s += "complete -c cerulion -n '" + cond + "' -a " + child + " -d '" +
           escape_single(cs ? cs->description : "") + "'\n";
    }
    for (const auto& o : c.options) {
      s += "complete -c cerulion -n '" + cond + "'";
      for (const auto& n : o.names) s += (n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1));
      if (o.takes_value) {
        s += " -r";
        switch (o.kind) {
          case ValueKind::Choices: s += " -a '" + join(o.choices) + "'"; break;
          case ValueKind::File: s += " -F"; break;
          case ValueKind::Directory: s += " -a '(__fish_complete_directories)'"; break;
          case ValueKind::Topic: s += " -a '(__cerulion_topics)'"; break;
          case ValueKind::RecordingTopic: s += " -a '(__cerulion_recording_topics)'"; break;
          default: break;
        }
      }
      s += " -d '" + escape_single(o.description) + "'\n";
    }
    for (const auto& p : c.positionals) {
      switch (p.kind) {
        case ValueKind::Choices: s += "complete -c cerulion -n '" + cond + "' -a '" + join(p.choices) + "'\n"; break;
        case ValueKind::File: s += "complete -c cerulion -n '" + cond + "' -F\n"; break;
        case ValueKind::Topic: s += "complete -c cerulion -n '" + cond + "' -a '(__cerulion_topics)'\n"; break;
        case ValueKind::Command: {
          const CommandSpec* top = find_spec(specs, "");
          if (top) s += "complete -c cerulion -n '" + cond + "' -a '" + join(top->children) + "'\n";
          break;
        }
        default: break;
      }
      if (p.kind == ValueKind::Topic) break;  // a command's first topic is what it is about
    }
  }
  return s;
}

void add_completion_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  cmd->group("");  // hidden: the scripts ship in completions/; this keeps them generated
  auto shell = std::make_shared<std::string>();
  auto topics_in = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash, zsh or fish")->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->add_option("--topics-in", *topics_in, "Print the topics of this recording, one a line (for the scripts)")
      ->group("");
  cmd->callback([&app, shell, topics_in] {
    if (!topics_in->empty()) {
#ifdef CERULION_HAVE_RECORDER
      auto reader = recorder::Reader::open(*topics_in);
      if (!reader) throw Exit{kExitFailure, reader.message()};
      std::set<std::string> topics;
      for (const auto& [id, channel] : reader->summary().channels) topics.insert(channel.topic);
      for (const auto& topic : topics) fmt::print("{}\n", topic);
      return;
#else
      throw Exit{kExitFailure, "this cerulion was built without the recorder"};
#endif
    }
    if (shell->empty()) throw Exit{kExitUsage, "completion needs a shell: bash, zsh or fish"};
    std::vector<CommandSpec> specs;
    collect(&app, "", false, specs);
    std::vector<std::string> tops;
    for (const auto& c : specs)
      if (!c.hidden && !c.path.empty() && c.path.find(' ') == std::string::npos) tops.push_back(c.path);
    if (*shell == "bash") fmt::print("{}", bash_script(specs, tops));
    else if (*shell == "zsh") fmt::print("{}", zsh_script(specs, tops));
    else fmt::print("{}", fish_script(specs));
  });
}

const CommandRegistration registration(90, add_completion_command);

}  // namespace
}  // namespace cerulion::cli
