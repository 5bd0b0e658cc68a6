// SPDX-License-Identifier: Apache-2.0
#pragma once
// Topic lists as the runner and its plan take them: checked and normalized by the one topic
// matcher.

#include <string>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::verify {

/// Normalized names ("a/b" is "/a/b"), or the error naming the bad one.
Result<std::vector<std::string>> normalized_topics(const std::vector<std::string>& topics);

}  // namespace cerulion::verify
