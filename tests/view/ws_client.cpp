// SPDX-License-Identifier: Apache-2.0
#include "ws_client.hpp"

#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

namespace cerulion::test {
namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
}  // namespace

struct WsClient::State {
  asio::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
  std::string subprotocol;
  beast::flat_buffer buffer;
  bool reading = false;       // an async read is pending (kept across timeouts)
  bool ready = false;         // it completed
  beast::error_code error;
  bool closed = false;
};

WsClient::WsClient(std::uint16_t port, const std::string& subprotocol) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.ws.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  s.ws.set_option(websocket::stream_base::decorator([subprotocol](websocket::request_type& request) {
    request.set(http::field::sec_websocket_protocol, subprotocol);
  }));
  s.ws.read_message_max(64u << 20);
  websocket::response_type response;
  beast::error_code ec;
  s.ws.handshake(response, "127.0.0.1", "/", ec);
  if (ec) throw std::runtime_error("handshake failed: HTTP " + std::to_string(response.result_int()) + ": " + ec.message());
  const auto chosen = response[http::field::sec_websocket_protocol];
  s.subprotocol.assign(chosen.data(), chosen.size());
}

WsClient::~WsClient() {
  beast::error_code ignored;
  state_->ws.next_layer().close(ignored);
}

const std::string& WsClient::subprotocol() const { return state_->subprotocol; }

void WsClient::send_text(const std::string& text) {
  state_->ws.text(true);
  state_->ws.write(asio::buffer(text));
}

std::optional<WsFrame> WsClient::read(std::chrono::milliseconds timeout) {
  auto& s = *state_;
  if (s.closed) return std::nullopt;
  if (!s.reading) {
    s.reading = true;
    s.ready = false;
    s.ws.async_read(s.buffer, [&s](beast::error_code ec, std::size_t) {
      s.error = ec;
      s.ready = true;
    });
  }
  s.ioc.restart();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!s.ready && std::chrono::steady_clock::now() < deadline) s.ioc.run_one_until(deadline);
  if (!s.ready) return std::nullopt;
  s.reading = false;
  if (s.error) {
    s.closed = true;
    return std::nullopt;
  }
  WsFrame frame{s.ws.got_text(), beast::buffers_to_string(s.buffer.data())};
  s.buffer.consume(s.buffer.size());
  return frame;
}

bool WsClient::closed() const { return state_->closed; }

int handshake_status(std::uint16_t port, const std::string& subprotocol) {
  // By hand: a refused Beast handshake does not give the response's status.
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> request(http::verb::get, "/", 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::upgrade, "websocket");
  request.set(http::field::connection, "Upgrade");
  request.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  request.set(http::field::sec_websocket_version, "13");
  request.set(http::field::sec_websocket_protocol, subprotocol);
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.skip(true);  // headers only: a 101 has no body, a refusal's is not needed
  beast::error_code ec;
  http::read_header(socket, buffer, parser, ec);
  if (ec) return -1;
  return static_cast<int>(parser.get().result_int());
}

HttpReply http_get(std::uint16_t port, const std::string& target) { return http_request(port, "GET", target, {}); }

HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& filler, const std::string& body) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!filler.empty()) request.set("X-Filler", filler);
  request.body() = body;
  if (!body.empty()) request.prepare_payload();
  http::write(socket, request);
  // Sent whole: the server, which may have answered before reading all of it, sees the end.
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  beast::error_code ec;
  http::read(socket, buffer, response, ec);
  if (ec && ec != http::error::end_of_stream) throw std::runtime_error(method + " " + target + ": " + ec.message());
  const auto type = response[http::field::content_type];
  return {static_cast<int>(response.result_int()), std::string(type.data(), type.size()), response.body()};
}

}  // namespace cerulion::test
