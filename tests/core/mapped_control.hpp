// SPDX-License-Identifier: Apache-2.0
#pragma once
// A topic's shared Control block mapped on its own, for white-box tests that look at or fake the
// shared state a participant would (the lock word, the single-publisher fast path).

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "cerulion/core.hpp"
#include "layout.hpp"

namespace cerulion::test {

class MappedControl {
 public:
  /// Maps the first page of `topic`'s segment; valid() is false when it cannot.
  explicit MappedControl(const std::string& topic) {
    const int fd = ::shm_open(segment_name(default_domain(), topic).c_str(), O_RDWR, 0);
    if (fd < 0) return;
    base_ = ::mmap(nullptr, kMappedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (base_ == MAP_FAILED) base_ = nullptr;
  }
  ~MappedControl() {
    if (base_ != nullptr) ::munmap(base_, kMappedBytes);
  }
  MappedControl(const MappedControl&) = delete;
  MappedControl& operator=(const MappedControl&) = delete;

  bool valid() const { return base_ != nullptr; }
  detail::Control& operator*() const { return *get(); }
  detail::Control* operator->() const { return get(); }

 private:
  static constexpr std::size_t kMappedBytes = 4096;
  detail::Control* get() const {
    return reinterpret_cast<detail::Control*>(static_cast<char*>(base_) + detail::kControlOffset);
  }
  void* base_ = nullptr;
};

}  // namespace cerulion::test
