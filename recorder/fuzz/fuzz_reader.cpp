// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the MCAP reader. Build: cmake -DCERULION_FUZZ=ON
// -DCMAKE_CXX_COMPILER=clang++; run: ./fuzz_mcap_reader tests/recorder/corpus -max_len=65536

#include "fuzz_body.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cerulion::recorder::fuzz::run_one(data, size);
  return 0;
}
