// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a comparison or a verification found, for a person (text), a program (JSON, the
// convention of docs/json.md) and a CI system (JUnit XML: a test case per output topic and per
// run comparison, a failure per topic that differs).

#include <cstddef>
#include <string>
#include <string_view>

#include "cerulion/verify/compare.hpp"
#include "cerulion/verify/verification.hpp"

namespace cerulion::verify {

/// One difference on one line: "/imu/filtered #3 (after /imu #3): field accel.z: expected 9.81, got 9.79".
std::string describe(const Difference& difference);

/// A comparison as lines of text: the first `shown` differences, then one summary line per topic
/// ("/imu/filtered: 100 expected, 100 got, 2 differ").
std::string text_report(const Comparison& comparison, std::size_t shown = 10);

/// A comparison as one JSON object: topics with their counts, every difference kept.
std::string json_report(const Comparison& comparison);

/// A verification as text: the verdict, the comparison with the recording, and each repeated
/// run's comparison with the first.
std::string text_report(const Verification& verification, std::size_t shown = 10);
/// A verification as one JSON object (every difference kept).
std::string json_report(const Verification& verification);
/// A verification as a JUnit XML document; `suite` names the test suite (the recording).
std::string junit_report(const Verification& verification, std::string_view suite);

}  // namespace cerulion::verify
