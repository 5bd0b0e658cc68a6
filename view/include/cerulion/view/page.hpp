// SPDX-License-Identifier: Apache-2.0
#pragma once
// The page a view server returns for GET /: one self-contained HTML document (no other files, no
// network but the server's own WebSocket) that lists the live topics with their rate, size and
// encoding, and for a selected json topic shows its latest message and plots a numeric field.
// It speaks the same protocol as Foxglove; the counts it shows come from GET /channels.json.

#include <string_view>

namespace cerulion::view {

/// The page, as served.
std::string_view page_html() noexcept;

}  // namespace cerulion::view
