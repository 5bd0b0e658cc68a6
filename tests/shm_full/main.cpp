// SPDX-License-Identifier: Apache-2.0
// Runs the suite inside a mount namespace of its own, so that its /dev/shm can be a small tmpfs
// that the tests fill without touching the machine's. Every process the tests start inherits it.

#include "catch_session.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <sys/mount.h>

#include "full_shm.hpp"

int main(int argc, char** argv) {
  const bool listing = argc > 1 && std::strncmp(argv[1], "--list", 6) == 0;
  if (!listing) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      std::printf("skipped: cannot make a private mount namespace for a small /dev/shm (%s); run as root\n",
                  std::strerror(errno));
      return 77;
    }
    if (!cerulion::test::mount_small_shm(64)) {
      std::printf("skipped: cannot mount a tmpfs on /dev/shm (%s)\n", std::strerror(errno));
      return 77;
    }
  }
  return cerulion::test::run_catch(argc, argv);
}
