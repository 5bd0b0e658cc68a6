// SPDX-License-Identifier: Apache-2.0
// The main() of a test executable, as CATCH_CONFIG_MAIN would write it.
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return cerulion::test::run_catch(argc, argv); }
