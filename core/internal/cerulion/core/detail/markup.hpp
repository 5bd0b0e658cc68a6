// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API: shared by cerulion's own libraries (verify's JUnit report, bench's HTML page).
//
// Text made safe inside XML or HTML, in element text and in quoted attributes alike.

#include <string>
#include <string_view>

namespace cerulion::detail {

inline std::string markup_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 has no place for most control characters, even escaped (nor has HTML).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace cerulion::detail
