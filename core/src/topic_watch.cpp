// SPDX-License-Identifier: Apache-2.0
#include <cerrno>
#include <cstring>
#include <string>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/detail/shm_file.hpp"

namespace cerulion {

Result<TopicWatch> TopicWatch::create(std::string_view domain) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Status(ErrorCode::SystemError, std::string("cannot watch for new topics: ") + std::strerror(errno));
  // A segment gets its name by a link (IN_CREATE); a rename into place would be IN_MOVED_TO.
  if (::inotify_add_watch(fd, detail::kShmDirectory, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
    const int err = errno;
    ::close(fd);
    return Status(ErrorCode::SystemError, std::string("cannot watch ") + detail::kShmDirectory + ": " + std::strerror(err));
  }
  return TopicWatch(fd, segment_prefix(domain));
}

TopicWatch::TopicWatch(TopicWatch&& other) noexcept : fd_(other.fd_), prefix_(std::move(other.prefix_)) {
  other.fd_ = -1;
}

TopicWatch& TopicWatch::operator=(TopicWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    prefix_ = std::move(other.prefix_);
    other.fd_ = -1;
  }
  return *this;
}

TopicWatch::~TopicWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool TopicWatch::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    alignas(inotify_event) char buffer[4096];
    ssize_t n;
    bool appeared = false;
    while ((n = ::read(fd_, buffer, sizeof buffer)) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        if ((event->mask & IN_Q_OVERFLOW) != 0) appeared = true;
        if (event->len > 0 && std::string_view(event->name).substr(0, prefix_.size()) == prefix_) appeared = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    if (appeared) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) < 0) return false;  // a signal: the caller looks why
  }
}

}  // namespace cerulion
