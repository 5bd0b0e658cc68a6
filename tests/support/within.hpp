// SPDX-License-Identifier: Apache-2.0
#pragma once
// A call that must not block (opening a FIFO, say), given a limit: one that blocks fails the test
// instead of hanging the suite.

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <thread>

namespace cerulion::test {

/// Runs `call` on another thread and gives up after `limit`: nullopt when it did not return by
/// then (the thread is left behind, detached).
template <typename Call>
auto within(std::chrono::milliseconds limit, Call call) -> std::optional<decltype(call())> {
  auto task = std::make_shared<std::packaged_task<decltype(call())()>>(call);
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) return std::nullopt;
  return result.get();
}

}  // namespace cerulion::test
