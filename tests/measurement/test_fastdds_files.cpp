// SPDX-License-Identifier: Apache-2.0
// Fast DDS's shared-memory files of processes that are gone: what is removed and what is not.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

#include "cerulion/measurement/fastdds_files.hpp"
#include "temp_dir.hpp"

using namespace cerulion::measurement;
namespace fs = std::filesystem;

TEST_CASE("Dead Fast DDS segments are removed, and held ones, ports and other files stay", "[measurement][fastdds]") {
  const fs::path dir = cerulion::test::fresh_temp_path("shm");
  fs::create_directories(dir);
  for (const char* name : {"fastrtps_0123456789abcdef", "fastrtps_0123456789abcdef_el",  // dead
                           "fastrtps_fedcba9876543210", "fastrtps_fedcba9876543210_el",  // alive
                           "fastrtps_port7400", "fastrtps_port7400_el",                  // a port
                           "fastrtps_notasegment_el", "cerulion.default:x"}) {
    std::ofstream(dir / name) << "x";
  }
  // The live owner holds its segment's lock, as a running participant does.
  const int owner = ::open((dir / "fastrtps_fedcba9876543210_el").c_str(), O_RDWR);
  REQUIRE(owner >= 0);
  REQUIRE(::flock(owner, LOCK_EX | LOCK_NB) == 0);

  SECTION("files just made are left to settle") {
    CHECK(remove_dead_fastdds_files(std::chrono::seconds(60), dir.string()) == 0);
    CHECK(fs::exists(dir / "fastrtps_0123456789abcdef"));
  }
  SECTION("settled") {
    // A negative settle time counts every file as settled (they were all made this second).
    CHECK(remove_dead_fastdds_files(std::chrono::seconds(-5), dir.string()) == 1);
    CHECK_FALSE(fs::exists(dir / "fastrtps_0123456789abcdef"));
    CHECK_FALSE(fs::exists(dir / "fastrtps_0123456789abcdef_el"));
    CHECK(fs::exists(dir / "fastrtps_fedcba9876543210"));
    CHECK(fs::exists(dir / "fastrtps_fedcba9876543210_el"));
    CHECK(fs::exists(dir / "fastrtps_port7400"));
    CHECK(fs::exists(dir / "fastrtps_notasegment_el"));
    CHECK(fs::exists(dir / "cerulion.default:x"));
  }
  ::close(owner);
  fs::remove_all(dir);
}
