// SPDX-License-Identifier: Apache-2.0
#pragma once
// A view server: live topics served over the Foxglove WebSocket protocol (foxglove.websocket.v1)
// to Foxglove, the official client libraries, or the page it serves itself on GET / of the same
// port. Topics are read as taps (recording::TapSet): whatever the clients do, no publisher waits.
// Each client has a bounded queue per subscribed channel (newest kept, drops counted and reported
// to it with a `status` message), and is written to on its own: a stalled client delays nobody.
//
//   cerulion::view::ViewOptions options;
//   options.taps.selection.all = true;
//   auto server = cerulion::view::ViewServer::create(options);
//   if (!server) ...;                      // names the bad pattern, or the address it cannot use
//   if (auto st = server->start(); !st) ...;
//   ...                                    // Foxglove connects to ws://127.0.0.1:8765
//   server->stop();

#include <cstdint>
#include <memory>
#include <string>

#include "cerulion/core/status.hpp"
#include "cerulion/view/counts.hpp"
#include "cerulion/view/options.hpp"

namespace cerulion::view {

namespace detail {
class ViewServerImpl;
}

/// Move-only. The destructor stops it.
class ViewServer {
 public:
  /// Checks the selection (as TapSet::create does), opens the named topics and listens on the
  /// address (InvalidArgument for one that is not an IP address, SystemError naming the address
  /// and port when it cannot be used). Serves nothing until start(). An empty selection is every
  /// topic.
  static Result<ViewServer> create(ViewOptions options);
  ViewServer(ViewServer&&) noexcept;
  ViewServer& operator=(ViewServer&&) noexcept;
  ~ViewServer();

  /// Starts the taps and serving.
  [[nodiscard]] Status start();
  /// Closes every connection and stops reading; returns once no thread of the server runs.
  void stop();

  /// The port it listens on (the one picked when ViewOptions::port was 0).
  std::uint16_t port() const noexcept;
  /// "ws://127.0.0.1:8765".
  std::string url() const;
  ViewCounts counts() const;

 private:
  explicit ViewServer(std::unique_ptr<detail::ViewServerImpl> impl);
  std::unique_ptr<detail::ViewServerImpl> impl_;
};

}  // namespace cerulion::view
