// SPDX-License-Identifier: Apache-2.0
// Catch2's own code, compiled once for every test executable rather than once in each (it takes
// longer to compile than most test files). Executables link cerulion_test_main for the usual main(),
// or write their own around run_catch (shm_full does).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.hpp"

namespace cerulion::test {

int run_catch(int argc, char** argv) { return Catch::Session().run(argc, argv); }

}  // namespace cerulion::test
