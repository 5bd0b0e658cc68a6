// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the Catch2 session of a test executable (catch_session.cpp holds Catch2's implementation,
// compiled once for all of them): what a main() of a test executable ends with.

namespace cerulion::test {

int run_catch(int argc, char** argv);

}  // namespace cerulion::test
