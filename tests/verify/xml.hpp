// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a JUnit report is well-formed XML, as a CI system's parser reads it: checked here by the
// rules of XML 1.0 that such a report can break, without an XML library among the dependencies.

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace cerulion::test {

namespace xml_detail {

inline bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
inline bool name_char(char c) {
  return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}

// The length of the UTF-8 sequence at `at`, 0 when it is not one XML allows (control characters
// other than tab, newline and carriage return are not characters of XML 1.0).
inline std::size_t character_length(const std::string& s, std::size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  if (c < 0x20) return c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || at + n > s.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(s[at + i]) >> 6) != 0x2) return 0;
  }
  return n;
}

// At `at`, an entity reference XML knows without a DTD; its length, 0 when it is none.
inline std::size_t reference_length(const std::string& s, std::size_t at) {
  const auto semicolon = s.find(';', at);
  if (semicolon == std::string::npos) return 0;
  const std::string ref = s.substr(at + 1, semicolon - at - 1);
  static const std::set<std::string> named = {"amp", "lt", "gt", "quot", "apos"};
  bool numeric = ref.size() > 1 && ref[0] == '#';
  for (std::size_t i = 1; numeric && i < ref.size(); ++i) numeric = std::isdigit(static_cast<unsigned char>(ref[i]));
  return named.count(ref) || numeric ? ref.size() + 2 : 0;
}

}  // namespace xml_detail

/// Why `text` is not well-formed XML, "" when it is: an optional declaration, one root element,
/// every element closed in order, attributes quoted and not repeated, '<' only as markup and '&'
/// only as a reference, valid UTF-8 and no control characters. Comments, CDATA, processing
/// instructions and a DOCTYPE, which a JUnit report has no use for, are refused too.
inline std::string xml_problem(const std::string& text) {
  using namespace xml_detail;
  std::size_t i = 0;
  const auto where = [&] { return " at offset " + std::to_string(i); };
  if (text.rfind("<?xml ", 0) == 0) {
    i = text.find("?>");
    if (i == std::string::npos) return "the declaration is not closed";
    i += 2;
  }
  std::vector<std::string> open;
  bool root_seen = false;
  const auto read_name = [&]() {
    const std::size_t from = i;
    if (i < text.size() && name_start(text[i])) {
      while (i < text.size() && name_char(text[i])) ++i;
    }
    return text.substr(from, i - from);
  };
  const auto skip_space = [&] {
    const std::size_t from = i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    return i > from;
  };
  // Characters up to `end` (exclusive of it) as text or an attribute value.
  const auto characters = [&](char end) -> std::string {
    while (i < text.size() && text[i] != end) {
      if (text[i] == '<') return "'<' in text or a value" + where();
      if (text[i] == '&') {
        const std::size_t n = reference_length(text, i);
        if (n == 0) return "'&' that is no reference" + where();
        i += n;
        continue;
      }
      const std::size_t n = character_length(text, i);
      if (n == 0) return "a byte that is no XML character" + where();
      i += n;
    }
    return "";
  };
  while (i < text.size()) {
    if (text[i] != '<') {
      if (open.empty()) {
        if (!skip_space()) return "text outside the root element" + where();
        continue;
      }
      if (auto problem = characters('<'); !problem.empty()) return problem;
      continue;
    }
    ++i;
    if (i < text.size() && (text[i] == '!' || text[i] == '?')) return "a comment, CDATA, DOCTYPE or instruction" + where();
    if (i < text.size() && text[i] == '/') {
      ++i;
      const std::string name = read_name();
      skip_space();
      if (i >= text.size() || text[i] != '>') return "a closing tag not ended by '>'" + where();
      ++i;
      if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
      open.pop_back();
      continue;
    }
    if (open.empty() && root_seen) return "a second root element" + where();
    const std::string name = read_name();
    if (name.empty()) return "'<' without an element name" + where();
    root_seen = true;
    std::set<std::string> attributes;
    for (;;) {
      const bool spaced = skip_space();
      if (text.compare(i, 2, "/>") == 0) {
        i += 2;
        break;
      }
      if (i < text.size() && text[i] == '>') {
        ++i;
        open.push_back(name);
        break;
      }
      if (!spaced) return "an attribute not set apart by a space in <" + name + ">" + where();
      const std::string attribute = read_name();
      if (attribute.empty()) return "<" + name + "> is not closed" + where();
      if (!attributes.insert(attribute).second) return "attribute " + attribute + " twice in <" + name + ">";
      skip_space();
      if (i >= text.size() || text[i] != '=') return "attribute " + attribute + " without '='" + where();
      ++i;
      skip_space();
      if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) return "attribute " + attribute + " not quoted" + where();
      const char quote = text[i++];
      if (auto problem = characters(quote); !problem.empty()) return problem;
      if (i >= text.size()) return "attribute " + attribute + " never closed";
      ++i;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return "";
}

}  // namespace cerulion::test
