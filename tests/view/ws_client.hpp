// SPDX-License-Identifier: Apache-2.0
#pragma once
// A minimal WebSocket client for the view tests (Boost.Beast, kept in ws_client.cpp): connect
// with a subprotocol, send text, read frames with a timeout, and plain HTTP requests.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cerulion::test {

struct WsFrame {
  bool text = false;
  std::string data;
};

class WsClient {
 public:
  /// Connects to 127.0.0.1:`port` and completes the handshake offering `subprotocol`; throws
  /// std::runtime_error (with the HTTP status when the server refused) otherwise.
  explicit WsClient(std::uint16_t port, const std::string& subprotocol = "foxglove.websocket.v1");
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  /// The subprotocol the server chose.
  const std::string& subprotocol() const;
  void send_text(const std::string& text);
  /// The next frame; nullopt when none came within `timeout` or the connection is closed.
  std::optional<WsFrame> read(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// True once a read found the connection closed.
  bool closed() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The status code of a WebSocket handshake offering `subprotocol` (101 when accepted).
int handshake_status(std::uint16_t port, const std::string& subprotocol);

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
};
/// GET `target` from 127.0.0.1:`port`.
HttpReply http_get(std::uint16_t port, const std::string& target);
/// A request of `method` with `filler` as the value of a header of its own ("X-Filler", left out
/// when empty) and `body`: how a server answers requests too large.
HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& filler, const std::string& body = {});

}  // namespace cerulion::test
