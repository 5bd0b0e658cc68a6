// SPDX-License-Identifier: Apache-2.0
// The I/O side of a view server, and the only file that includes Boost.Beast/Asio: one thread
// runs every connection. A connection starts as HTTP: GET / is the page, GET /channels.json the
// counts it shows, and a WebSocket upgrade that asks for foxglove.websocket.v1 becomes a client of
// the hub. Each client has at most one write in flight and reads on its own, so a client whose
// socket is full only stops its own writes.

#include "cerulion/view/server.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <thread>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <fmt/core.h>

#include "cerulion/core/detail/shm_directory.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/view/page.hpp"
#include "cerulion/view/status.hpp"
#include "hub.hpp"

namespace cerulion::view {
namespace detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

/// How long an HTTP request may take to arrive, and a WebSocket handshake to finish.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
/// The largest request head, and body, read.
constexpr std::uint32_t kMaxRequestBytes = 16 * 1024;
/// A client from which nothing (not even a pong) arrives for this long is closed: a client that
/// never reads stops answering pings once its socket is full.
constexpr auto kIdleTimeout = std::chrono::seconds(30);

bool offers_subprotocol(const http::request<http::string_body>& request) {
  const auto offered = request[http::field::sec_websocket_protocol];
  std::string_view rest(offered.data(), offered.size());
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == kSubprotocol) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(asio::io_context& ioc, tcp::socket socket, Hub& hub, const ViewOptions& options)
      : ioc_(ioc), stream_(std::move(socket)), hub_(hub), options_(options) {}

  void run() {
    beast::error_code ec;
    const auto remote = stream_.socket().remote_endpoint(ec);
    peer_ = ec ? std::string("?") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
    read_request();
  }

  void close() {
    beast::error_code ignored;
    if (ws_) {
      beast::get_lowest_layer(*ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(*ws_).socket().close(ignored);
    } else {
      stream_.socket().close(ignored);
    }
  }

 private:
  void read_request() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestBytes);
    parser_->body_limit(kMaxRequestBytes);
    stream_.expires_after(kHandshakeTimeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      // A request too large is answered (RFC 6585, 9110) before the connection closes.
      if (ec == http::error::header_limit) {
        return self->reject_unread(http::status::request_header_fields_too_large,
                                   fmt::format("request header fields over {} bytes\n", kMaxRequestBytes));
      }
      if (ec == http::error::body_limit) {
        return self->reject_unread(http::status::payload_too_large,
                                   fmt::format("request body over {} bytes\n", kMaxRequestBytes));
      }
      if (ec) return;  // closed, timed out or not HTTP: nothing to answer
      self->on_request(self->parser_->release());
    });
  }

  // Answers a request that was not read whole, then reads and drops what the client still sends
  // until it closes (or the handshake timeout passes): closing with unread bytes would reset the
  // connection, and the client would lose the answer with it.
  void reject_unread(http::status status, std::string body) {
    http::request<http::string_body> request;
    request.version(11);
    respond(request, status, "text/plain", std::move(body), true);
  }

  void drain() {
    stream_.async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->drain();
    });
  }

  void on_request(http::request<http::string_body> request) {
    if (websocket::is_upgrade(request)) {
      if (!offers_subprotocol(request)) return refuse(request, http::status::bad_request, "this server speaks the WebSocket subprotocol foxglove.websocket.v1 only\n");
      if (hub_.client_count() >= options_.max_clients) {
        return refuse(request, http::status::service_unavailable,
                      fmt::format("too many clients (at most {})\n", options_.max_clients));
      }
      return accept(std::move(request));
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return respond(request, http::status::method_not_allowed, "text/plain", "GET only\n");
    }
    const std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/" || path == "/index.html") return respond(request, http::status::ok, "text/html; charset=utf-8", std::string(page_html()));
    if (path == "/channels.json") return respond(request, http::status::ok, "application/json", hub_.channels_json());
    respond(request, http::status::not_found, "text/plain", "not found\n");
  }

  void refuse(const http::request<http::string_body>& request, http::status status, std::string body) {
    hub_.note_refused();
    respond(request, status, "text/plain", std::move(body));
  }

  void respond(const http::request<http::string_body>& request, http::status status, const char* type, std::string body,
               bool unread = false) {
    auto response = std::make_shared<http::response<http::string_body>>(status, request.version());
    response->set(http::field::server, options_.name);
    response->set(http::field::content_type, type);
    response->set(http::field::cache_control, "no-store");
    response->keep_alive(false);
    if (request.method() != http::verb::head) response->body() = std::move(body);
    response->prepare_payload();
    http::async_write(stream_, *response, [self = shared_from_this(), response, unread](beast::error_code ec, std::size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      if (unread && !ec) {
        self->stream_.expires_after(kHandshakeTimeout);
        self->drain();
      }
    });
  }

  void accept(http::request<http::string_body> request) {
    stream_.expires_never();
    ws_.emplace(std::move(stream_));
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = kHandshakeTimeout;
    timeouts.idle_timeout = kIdleTimeout;
    timeouts.keep_alive_pings = true;
    ws_->set_option(timeouts);
    ws_->set_option(websocket::stream_base::decorator([name = options_.name](websocket::response_type& response) {
      response.set(http::field::server, name);
      response.set(http::field::sec_websocket_protocol, kSubprotocol);
    }));
    ws_->read_message_max(options_.max_client_message);
    // A message goes out as one frame, header and payload in one gathered write: Beast's default
    // splits it into frames of its write buffer's size, a write each, which a camera's frame
    // turns into hundreds.
    ws_->auto_fragment(false);
    ws_->async_accept(request, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->on_accepted();
    });
  }

  void on_accepted() {
    std::weak_ptr<Session> weak = shared_from_this();
    // Called from the tap threads, maybe after this session is gone: it holds nothing of it but
    // the weak pointer and the flag. Many pushes, one wake-up in flight.
    slot_ = hub_.connect(peer_, [pending = wake_pending_, weak, &ioc = ioc_] {
      if (pending->exchange(true, std::memory_order_acq_rel)) return;
      asio::post(ioc, [pending, weak] {
        pending->store(false, std::memory_order_release);
        if (auto self = weak.lock()) self->pump();
      });
    });
    recording::report(options_.events, recording::EventKind::Info, "",
                      fmt::format("client {} connected from {}", slot_->number(), peer_));
    read_loop();
    pump();
  }

  void read_loop() {
    ws_->async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->finish(ec == websocket::error::closed ? "closed the connection" : ec.message());
      if (self->ws_->got_text()) {
        const auto data = self->in_.cdata();
        self->hub_.handle(*self->slot_, std::string_view(static_cast<const char*>(data.data()), data.size()));
      } else {
        (void)self->slot_->push_text(status_json(StatusLevel::Error, "binary client messages are not supported (no clientPublish)"));
      }
      self->in_.consume(self->in_.size());
      self->read_loop();
    });
  }

  void pump() {
    if (writing_ || finished_) return;
    if (slot_->overflowed()) return finish("fell too far behind (text queue full): disconnected");
    auto next = slot_->next();
    if (!next) return;
    writing_ = true;
    current_ = std::move(*next);
    auto done = [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
      self->writing_ = false;
      if (ec) return self->finish(ec.message());
      self->hub_.note_sent(bytes, std::holds_alternative<MessageFrame>(self->current_));
      self->current_ = std::string();
      self->pump();
    };
    if (auto* text = std::get_if<std::string>(&current_)) {
      ws_->text(true);
      ws_->async_write(asio::buffer(*text), std::move(done));
    } else {
      auto& frame = std::get<MessageFrame>(current_);
      ws_->binary(true);
      const std::array<asio::const_buffer, 2> buffers{asio::buffer(frame.header),
                                                       asio::buffer(frame.payload->data(), frame.payload->size())};
      ws_->async_write(buffers, std::move(done));
    }
  }

  void finish(const std::string& why) {
    if (finished_) return;
    finished_ = true;
    hub_.disconnect(slot_);
    recording::report(options_.events, recording::EventKind::Info, "",
                      fmt::format("client {} ({}) {}", slot_->number(), peer_, why));
    close();
  }

  asio::io_context& ioc_;
  beast::tcp_stream stream_;
  Hub& hub_;
  const ViewOptions& options_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::array<char, 4096> discard_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<websocket::stream<beast::tcp_stream>> ws_;
  beast::flat_buffer in_;
  std::shared_ptr<ClientSlot> slot_;
  Outgoing current_;
  bool writing_ = false;
  bool finished_ = false;
  std::shared_ptr<std::atomic<bool>> wake_pending_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace

class ViewServerImpl {
 public:
  ViewServerImpl(ViewOptions options, recording::TopicMatcher matcher)
      : options_(std::move(options)),
        hub_(options_, std::move(matcher)),
        acceptor_(ioc_),
        status_path_(status_file_path(options_.status_directory, options_.taps.domain,
                                      static_cast<std::uint32_t>(::getpid()))) {}

  Status listen() {
    beast::error_code ec;
    const auto address = asio::ip::make_address(options_.address == "localhost" ? "127.0.0.1" : options_.address, ec);
    if (ec) return Status(ErrorCode::InvalidArgument, fmt::format("'{}' is not an IP address", options_.address));
    const tcp::endpoint endpoint(address, options_.port);
    const auto where = fmt::format("{}:{}", options_.address, options_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec == asio::error::address_in_use) {
      const auto other = find_server_on_port(options_.status_directory, options_.port);
      return Status(ErrorCode::SystemError,
                    fmt::format("cannot listen on {}: the port is in use{}", where,
                                other ? fmt::format(" by view server {} of domain '{}' ({})", other->pid, other->domain, other->url)
                                      : std::string(" by another program")),
                    Subject::option("port"));
    }
    if (ec == asio::error::access_denied && options_.port < 1024) {
      return Status(ErrorCode::PermissionDenied,
                    fmt::format("cannot listen on {}: ports below 1024 need privileges (root, or CAP_NET_BIND_SERVICE)", where),
                    Subject::option("port"));
    }
    if (ec) return Status(ErrorCode::SystemError, fmt::format("cannot listen on {}: {}", where, ec.message()));
    port_ = acceptor_.local_endpoint().port();
    return {};
  }

  Status open_taps() {
    recording::TapSetOptions taps = options_.taps;
    if (!taps.events) taps.events = options_.events;
    auto created = recording::TapSet::create(std::move(taps), hub_);
    if (!created) return created.status();
    taps_.emplace(std::move(*created));
    return {};
  }

  Status start() {
    if (started_) return {};
    started_ = true;
    started_realtime_ns_ = realtime_ns();
    taps_->start();
    write_status();  // seen from the start, not a tick later
    accept_next();
    tick_next();
    thread_ = std::thread([this] { ioc_.run(); });
    return {};
  }

  void stop() {
    if (taps_) taps_->stop();
    if (!started_ || stopped_) return;
    stopped_ = true;
    asio::post(ioc_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      timer_.cancel();
      for (auto& weak : sessions_) {
        if (auto s = weak.lock()) s->close();
      }
    });
    // The closes let every handler finish; the stop is for what a peer keeps waiting.
    asio::post(ioc_, [this] { ioc_.stop(); });
    if (thread_.joinable()) thread_.join();
    if (options_.status_file) std::remove(status_path_.c_str());
  }

  ~ViewServerImpl() { stop(); }

  std::uint16_t port() const noexcept { return port_; }
  std::string url() const {
    const bool v6 = options_.address.find(':') != std::string::npos;
    return fmt::format("ws://{}{}{}:{}", v6 ? "[" : "", options_.address, v6 ? "]" : "", port_);
  }
  ViewCounts counts() const { return hub_.counts(); }

 private:
  void accept_next() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        // Frames are written whole, one at a time: Nagle would hold a small one back until the
        // client acknowledges the one before, which a client that only reads does late.
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        auto session = std::make_shared<Session>(ioc_, std::move(socket), hub_, options_);
        std::erase_if(sessions_, [](const auto& w) { return w.expired(); });
        sessions_.push_back(session);
        session->run();
      }
      accept_next();
    });
  }

  void tick_next() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([this](beast::error_code ec) {
      if (ec) return;
      hub_.tick();
      if (taps_) {
        for (const auto& r : taps_->take_removed_unread()) hub_.count_removed_unread(r.messages);
      }
      write_status();
      tick_next();
    });
  }

  /// Replaces the status file; a failure is said once (until the next success), and serving goes on.
  void write_status() {
    if (!options_.status_file) return;
    ViewStatus s;
    s.pid = static_cast<std::uint32_t>(::getpid());
    s.domain = options_.taps.domain;
    s.url = url();
    s.address = options_.address;
    s.port = port_;
    s.started_realtime_ns = started_realtime_ns_;
    s.updated_realtime_ns = realtime_ns();
    s.counts = hub_.counts();
    if (Status failed = cerulion::detail::new_failure(write_status_file(status_path_, s), status_problem_); !failed) {
      recording::report(options_.events, recording::EventKind::Warning, "",
                        "cannot keep the status file (`cerulion view status` will not see this server): " +
                            failed.message());
    }
  }

  ViewOptions options_;
  Hub hub_;
  asio::io_context ioc_{1};
  tcp::acceptor acceptor_;
  asio::steady_timer timer_{ioc_};
  std::optional<recording::TapSet> taps_;
  std::vector<std::weak_ptr<Session>> sessions_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  const std::string status_path_;
  std::uint64_t started_realtime_ns_ = 0;
  std::string status_problem_;  ///< the last failure to write the status file, "" after a success
};

}  // namespace detail

Result<ViewServer> ViewServer::create(ViewOptions options) {
  auto& s = options.taps.selection;
  if (s.topics.empty() && !s.all && s.include.empty()) s.all = true;
  auto matcher = recording::TopicMatcher::compile(s);
  if (!matcher) return matcher.status();
  auto impl = std::make_unique<detail::ViewServerImpl>(std::move(options), std::move(*matcher));
  if (Status st = impl->open_taps(); !st) return st;
  if (Status st = impl->listen(); !st) return st;
  return ViewServer(std::move(impl));
}

ViewServer::ViewServer(std::unique_ptr<detail::ViewServerImpl> impl) : impl_(std::move(impl)) {}
ViewServer::ViewServer(ViewServer&&) noexcept = default;
ViewServer& ViewServer::operator=(ViewServer&&) noexcept = default;
ViewServer::~ViewServer() = default;

Status ViewServer::start() { return impl_->start(); }
void ViewServer::stop() { impl_->stop(); }
std::uint16_t ViewServer::port() const noexcept { return impl_->port(); }
std::string ViewServer::url() const { return impl_->url(); }
ViewCounts ViewServer::counts() const { return impl_->counts(); }

bool is_loopback(const std::string& address) {
  if (address == "localhost") return true;
  boost::system::error_code ec;
  const auto parsed = boost::asio::ip::make_address(address, ec);
  return !ec && parsed.is_loopback();
}

}  // namespace cerulion::view
