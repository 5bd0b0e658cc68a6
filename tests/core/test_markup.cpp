// SPDX-License-Identifier: Apache-2.0
// The one markup escaper (verify's JUnit report, bench's HTML page).

#include <catch2/catch.hpp>

#include "cerulion/core/detail/markup.hpp"

using cerulion::detail::markup_escaped;

TEST_CASE("Markup escaping leaves plain text and line breaks as they are", "[core][markup]") {
  CHECK(markup_escaped("") == "");
  CHECK(markup_escaped("/imu/filtered: 5 µs\n\tok") == "/imu/filtered: 5 µs\n\tok");
}

TEST_CASE("Markup escaping makes ampersands, angle brackets and both quotes entities", "[core][markup]") {
  CHECK(markup_escaped(R"(<a href="x">Tom's & Jerry's</a>)") ==
        "&lt;a href=&quot;x&quot;&gt;Tom&apos;s &amp; Jerry&apos;s&lt;/a&gt;");
}

TEST_CASE("Markup escaping turns control characters other than line feed and tab into a question mark",
          "[core][markup]") {
  CHECK(markup_escaped(std::string("a\x01""b\rc\x1f", 6)) == "a?b?c?");
}
