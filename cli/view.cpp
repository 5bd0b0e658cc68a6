// SPDX-License-Identifier: Apache-2.0
// `cerulion view [TOPIC...]`: live topics to Foxglove (and a page of its own) over the Foxglove
// WebSocket protocol; view/ does the work. A line once a second says clients, subscriptions,
// what was sent and dropped. `cerulion view status` says the same of every server of the domain,
// from the status files they replace once a second.

#include <unistd.h>

#include <fmt/core.h>

#include "command.hpp"
#include "status_report.hpp"
#include "supervise.hpp"
#include "topic_options.hpp"
#ifdef CERULION_HAVE_VIEW
#include "cerulion/view/server.hpp"
#include "cerulion/view/status.hpp"
#endif

namespace cerulion::cli {
namespace {

constexpr const char* kViewNotBuilt = "view: this cerulion was built without Boost.Beast (libboost-dev)";

struct ViewSettings {
  recording::TopicSelection selection;
  std::string address = "127.0.0.1";
  std::uint16_t port = 8765;
  std::size_t max_clients = 4;
  std::size_t queue_messages = 64;
  std::uint64_t queue_bytes = 32u << 20;
  std::string readers = "pooled";
  double duration_s = 0;
};

#ifdef CERULION_HAVE_VIEW
/// --readers onto the tap set's settings (view/options.hpp says what each costs).
void set_readers(recording::TapSetOptions& taps, const std::string& readers) {
  taps.readers = readers == "pooled" ? recording::Readers::Pooled : recording::Readers::PerTopic;
  taps.poll_when_due = readers == "polling";
}

std::string status_line(const view::ViewCounts& c) {
  return fmt::format("serving: {}, {}, {}, sent {} ({}), dropped {}, lost {}", counted(c.channels.size(), "channel"),
                     counted(c.clients, "client"), counted(c.subscriptions, "subscription"),
                     counted(c.messages_sent, "message"), format_bytes(static_cast<double>(c.bytes_sent)), c.dropped,
                     c.lost);
}

/// The server's URL as another machine reaches it: a server on every address (0.0.0.0, ::) is
/// reached at this machine's name, not at the address it listens on.
std::string reachable_url(const std::string& url, const std::string& address) {
  if (address != "0.0.0.0" && address != "::") return url;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return url;
  const auto begin = url.find("//") + 2;
  const auto end = url.rfind(':');
  if (begin < 2 || end == std::string::npos || end < begin) return url;
  return url.substr(0, begin) + host + url.substr(end);
}

void run_view(const ViewSettings& s) {
  view::ViewOptions o;
  o.taps.domain = globals().domain;
  o.taps.selection = s.selection;
  set_readers(o.taps, s.readers);
  o.address = s.address;
  o.port = s.port;
  o.max_clients = s.max_clients;
  o.queue = {s.queue_messages, s.queue_bytes};
  install_stop_handlers();
  recording::EventQueue events;
  o.events = &events;
  // Asked before the taps open the topics, which creates them, as echo asks before it subscribes.
  std::vector<std::string> warnings;
  for (const auto& topic : s.selection.topics) {
    if (std::string warning = unpublished_warning(topic, o.taps.domain, "view"); !warning.empty()) {
      warnings.push_back(std::move(warning));
    }
  }
  auto created = view::ViewServer::create(o);
  if (!created && created.status().subject() == Subject::option("port")) {
    // A port in use or one that needs privileges is this machine's state, not a usage error (exit 1).
    throw Exit{kExitFailure, fmt::format("view: {}; --port 0 takes a free one", created.status().message())};
  }
  auto server = take(std::move(created), "view");
  check(server.start(), "view");
  const std::string url = reachable_url(server.url(), s.address);
  const std::string http = "http" + url.substr(2);
  say(fmt::format("serving {} of domain '{}' on {} (Foxglove: open a Foxglove WebSocket connection there; "
                  "a browser: {}/); Ctrl-C stops",
                  o.taps.selection.all || (o.taps.selection.topics.empty() && o.taps.selection.include.empty())
                      ? std::string("every topic (new ones too)")
                      : std::string("the chosen topics"),
                  o.taps.domain, url, http));
  for (const auto& warning : warnings) say("cerulion: warning: " + warning);
  if (!view::is_loopback(s.address)) {
    say(fmt::format("cerulion: warning: listening on {}: the Foxglove WebSocket protocol has no authentication, "
                    "so whoever reaches this port reads every topic served",
                    s.address));
  }
  Supervision supervision;
  supervision.events = &events;
  supervision.duration_s = s.duration_s;
  supervision.progress = [&](double) { return status_line(server.counts()); };
  (void)supervise(supervision);
  const auto last = server.counts();
  server.stop();
  say_events(events);
  say(fmt::format("served {} client connection{}: sent {} ({}), dropped {} (clients behind), lost {} (never read: "
                  "the view behind its topics)",
                  last.connections, last.connections == 1 ? "" : "s", counted(last.messages_sent, "message"),
                  format_bytes(static_cast<double>(last.bytes_sent)), last.dropped, last.lost));
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}

/// A line for the server, one for its clients, then one per channel.
std::vector<std::string> view_status_lines(const view::ViewStatus& s) {
  const auto& c = s.counts;
  const double up = static_cast<double>(s.updated_realtime_ns - s.started_realtime_ns) / 1e9;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("view {}: domain '{}' on {}, up {:.0f} s", s.pid, s.domain, s.url, up));
  lines.push_back(fmt::format("  {}, {} queued; {} accepted, {} refused", status_line(c),
                              format_bytes(static_cast<double>(c.queued_bytes)), counted(c.connections, "connection"),
                              c.refused));
  for (const auto& ch : c.channels) {
    lines.push_back(fmt::format("  channel {} {} ({}): {}, {}, last {}, {:.1f} Hz, lost {}", ch.id, printable(ch.topic),
                                printable(ch.encoding), counted(ch.messages, "message"),
                                format_bytes(static_cast<double>(ch.bytes)),
                                format_bytes(static_cast<double>(ch.last_size)), ch.rate_hz, ch.lost));
  }
  return lines;
}
#endif

void add_view_status_command(CLI::App& parent) {
  add_status_command(parent,
                     {"view server", "views", "What the running view servers of the domain serve, from their status files",
                      "Each running view server (`cerulion view`, or a program's own ViewServer) replaces\n"
                      "/dev/shm/cerulion-view.<domain>.<pid>.json once a second.\n"
                      "With no view server running in the domain it says so and exits 1 (with --json, after an object\n"
                      "whose list of views is empty).\n"
                      "Examples:\n"
                      "  cerulion view status\n"
                      "  cerulion --domain lab view status --json"},
                     []() -> StatusReport {
#ifdef CERULION_HAVE_VIEW
                       auto listing = view::read_status_files(view::kDefaultStatusDirectory, globals().domain);
                       check(listing.status(), "view status");
                       return status_report(listing->views, listing->problems, view_status_lines);
#else
                       throw Exit{kExitFailure, kViewNotBuilt};
#endif
                     });
}

}  // namespace

void add_view_command(CLI::App& app) {
  auto s = std::make_shared<ViewSettings>();
  auto* cmd = app.add_subcommand("view", "Serve live topics to Foxglove and to a browser (Foxglove WebSocket protocol)");
  cmd->footer(
      "Serves the Foxglove WebSocket protocol (foxglove.websocket.v1): in Foxglove, open a connection to\n"
      "ws://127.0.0.1:8765. A browser gets a page of its own at http://127.0.0.1:8765/: the topics with\n"
      "their rate and size, and a json topic's latest message and a plot of a field. Topics are read as\n"
      "taps: no publisher ever waits for a client. A client that reads slower than a topic comes loses\n"
      "the oldest messages (it is told so in a status message). Without topics, every topic is served.\n"
      "The protocol has no authentication: serve on another address than loopback only on a trusted network.\n"
      "Examples:\n"
      "  cerulion view                          # every topic, ws://127.0.0.1:8765\n"
      "  cerulion view /imu /camera --port 9000\n"
      "  cerulion view -e '^/robot/' -x '/debug$' --address 0.0.0.0\n"
      "  cerulion view /imu --readers polling   # sooner on a machine with CPUs to spare\n"
      "  cerulion view status                   # what the running servers serve (--json too)");
  cmd->add_option("topics", s->selection.topics, "Topics to serve (default: every topic, new ones too)");
  cmd->add_flag("-a,--all", s->selection.all, "Serve every topic, including topics that appear later (the default)");
  add_topic_pattern_options(*cmd, s->selection, "Serve");
  cmd->add_option("--address", s->address, "Address to listen on (default 127.0.0.1: this machine only; localhost is 127.0.0.1; 0.0.0.0 every "
                  "address, the URL said at this machine's name)");
  cmd->add_option("--port", s->port, "TCP port (default 8765, Foxglove's default; 0 picks a free one; below 1024 needs privileges)")->check(integer_in(0, 65535));
  cmd->add_option("--max-clients", s->max_clients, "Clients served at once (default 4)")->check(integer_in(1, 1000));
  cmd->add_option("--queue-messages", s->queue_messages,
                  "Messages waiting per client and topic before the oldest are dropped (default 64)")
      ->check(integer_in(1, 1000000));
  cmd->add_option("--queue-bytes", s->queue_bytes,
                  "Bytes waiting per client and topic before the oldest are dropped (default 32MiB)")
      ->transform(size_validator());
  cmd->add_option("--readers", s->readers,
                  "How topics are read: pooled (a few threads for all topics; a message waits up to a millisecond), "
                  "polling (a thread per topic polling when its next message is due: sooner, at a CPU cost just when "
                  "the topic's own processes run), per-topic (a thread per topic, not polling: least CPU, milliseconds late)")
      ->check(CLI::IsMember({"pooled", "polling", "per-topic"}))
      ->capture_default_str();
  cmd->add_option("--duration", s->duration_s, "Stop after SEC seconds")->transform(positive_duration());
  add_view_status_command(*cmd);
  cmd->callback([s, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // `view status` ran
    auto& selection = s->selection;
    check_topic_patterns(selection);
    if (!selection.exclude.empty() && selection.topics.empty() && selection.include.empty()) selection.all = true;
#ifdef CERULION_HAVE_VIEW
    run_view(*s);
#else
    throw Exit{kExitFailure, kViewNotBuilt};
#endif
  });
}

}  // namespace cerulion::cli
