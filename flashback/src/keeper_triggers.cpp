// SPDX-License-Identifier: Apache-2.0
// The keeper's control thread: triggers (a request or signal, a message on the trigger topic, a
// publisher's death, a stall); its dump thread: the post window that gathers them into one dump,
// and the limits that keep a crash loop from filling the disk.

#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "keeper_impl.hpp"

namespace cerulion::flashback::detail {

namespace {

std::uint64_t steady_ns() { return monotonic_ns(); }

// A trigger message's bytes as a note: text kept, anything else shown as '?', bounded.
std::string note_of(std::span<const std::byte> data) {
  std::string note;
  for (std::size_t i = 0; i < data.size() && note.size() < 1000; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c == 0 && i + 1 == data.size()) break;  // a C string's terminator
    note.push_back(c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f) ? static_cast<char>(c) : '?');
  }
  while (!note.empty() && (note.back() == '\n' || note.back() == ' ')) note.pop_back();
  return note;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

std::filesystem::path dump_dir_of(const KeeperOptions& options) { return std::filesystem::path(options.dump_dir); }

}  // namespace

std::string amount(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

void KeeperImpl::trigger_on_topic(const std::string& topic, std::span<const std::byte> data) {
  trigger("topic", fmt::format("message on {}", topic), note_of(data));
}

void KeeperImpl::trigger(std::string kind, std::string details, std::string note) {
  std::lock_guard lock(mutex_);
  if (pending_) {
    // A trigger during another's post window joins that dump.
    pending_->details.push_back(kind + ": " + details);
    pending_->notes.push_back(std::move(note));
    return;
  }
  PendingDump p;
  p.due_ns = steady_ns() + static_cast<std::uint64_t>(options.post_s * 1e9);
  p.kind = kind;
  p.details.push_back(std::move(details));
  p.notes.push_back(std::move(note));
  pending_ = std::move(p);
  dump_wake_.notify_all();
  if (options.post_s > 0) {
    say(recording::EventKind::Info, "",
        fmt::format("{} ({}): dumping in {:.1f} s", kind, pending_->details.front(), options.post_s));
  }
}

void KeeperImpl::control_loop() {
  std::uint64_t next_death_check = 0;
  while (!stop_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t now = steady_ns();
    if (options.on_death && now >= next_death_check) {
      watch_deaths();
      next_death_check = now + 200'000'000ull;
    }
    if (options.on_stall_s > 0) watch_stalls(realtime_ns());
    count_removed_unread();
  }
  count_removed_unread();
}

void KeeperImpl::count_removed_unread() {
  if (!taps_) return;
  for (const auto& r : taps_->take_removed_unread()) {
    // On its name's channel; else a channel of its own, with no message: status lists it, and a
    // dump of a window that holds its removal counts its messages lost.
    std::optional<std::uint16_t> id;
    for (const auto& t : impl_of(store).channels()) {
      if (t.topic == r.topic && !t.name_damaged) id = t.channel_id;
    }
    if (!id) id = impl_of(store).channel_for(r.topic, "", 0, 0);
    if (id) impl_of(store).count_lost_unread(*id, r.messages, r.removed_realtime_ns);
  }
}

void KeeperImpl::dump_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (pending_ && (stop_dumping_ || steady_ns() >= pending_->due_ns)) {
      lock.unlock();
      run_pending_dump();
      lock.lock();
      continue;
    }
    if (stop_dumping_) return;
    if (pending_) {
      dump_wake_.wait_for(lock, std::chrono::nanoseconds(pending_->due_ns - std::min(pending_->due_ns, steady_ns())));
    } else {
      dump_wake_.wait(lock);
    }
  }
}

void KeeperImpl::watch_deaths() {
  // A publisher that left cleanly is gone from its topic's table; one that died is still listed,
  // not alive, until another participant evicts it, and whoever evicts it records the death in
  // the topic's death log. A reader evicts within milliseconds, long before this look: the log,
  // not the table, is where most deaths are found. A clean exit (`pub -n 20`) is in neither.
  auto mourn = [&](std::uint32_t pid, const std::string& topic) {
    if (!deaths_seen_.insert({pid, topic}).second) return;
    trigger("death", fmt::format("publisher {} of {} died", pid, topic), "");
  };
  for (const auto& topic : publishers_of(options.domain, impl_of(store).channels())) {
    for (const auto pid : topic.dead) mourn(pid, topic.topic);
    for (const auto& d : topic.died) {
      if (d.noticed_realtime_ns >= started_realtime_ns_) mourn(d.pid, topic.topic);
    }
  }
}

void KeeperImpl::watch_stalls(std::uint64_t now_realtime) {
  if (!stall_watch_) stall_watch_.emplace(options.on_stall_s);
  std::map<std::string, std::uint64_t> published;
  if (taps_) {
    for (const auto& c : taps_->counts()) published[c.topic] = c.published;
  }
  for (const auto& t : impl_of(store).channels()) {
    ChannelActivity activity{t.topic, t.messages, std::nullopt, t.last_realtime_ns, t.rate_hz};
    if (auto it = published.find(t.topic); it != published.end()) activity.published = it->second;
    if (auto stall = stall_watch_->look(t.channel_id, activity, now_realtime)) trigger("stall", *stall, "");
  }
}

std::string KeeperImpl::dump_refusal() {
  const std::uint64_t now = steady_ns();
  while (!dump_times_.empty() && now - dump_times_.front() > 3600'000'000'000ull) dump_times_.pop_front();
  if (dump_times_.size() >= options.max_dumps_per_hour) {
    return fmt::format("{} dump{} in the last hour already (the limit)", dump_times_.size(),
                       dump_times_.size() == 1 ? "" : "s");
  }
  namespace fs = std::filesystem;
  const fs::path dir = dump_dir_of(options);
  std::uint64_t used = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("flashback-", 0) != 0 || name.size() < 5 || name.substr(name.size() - 5) != ".mcap") continue;
    std::error_code size_ec;
    const auto size = it->file_size(size_ec);
    if (!size_ec) used += size;
  }
  const auto held = store.status();
  const std::uint64_t estimate = held.memory_bytes + held.staged_bytes;
  if (used + estimate > options.max_disk_bytes) {
    return fmt::format("the dumps in {} take {} and this one would add about {} (the limit is {})", dir.string(),
                       amount(static_cast<double>(used)), amount(static_cast<double>(estimate)),
                       amount(static_cast<double>(options.max_disk_bytes)));
  }
  return "";
}

void KeeperImpl::run_pending_dump() {
  PendingDump p;
  {
    std::lock_guard lock(mutex_);
    if (!pending_) return;
    p = std::move(*pending_);
    pending_.reset();
  }
  const std::string details = join(p.details, "; ");
  if (auto why = dump_refusal(); !why.empty()) {
    impl_of(store).header().dumps_refused.fetch_add(1);
    say(recording::EventKind::Warning, dump_dir_of(options).string(), fmt::format("dump refused ({}: {}): {}", p.kind, details, why));
    return;
  }
  namespace fs = std::filesystem;
  const fs::path dir = dump_dir_of(options);
  std::string path = (dir / default_dump_file_name(options.domain, options.name, realtime_ns())).string();
  for (int i = 1; fs::exists(path) && i < 100; ++i) {
    path = (dir / default_dump_file_name(options.domain, options.name, realtime_ns())).string();
    path.insert(path.size() - 5, fmt::format("-{}", i));
  }
  DumpOptions dump_options;
  dump_options.trigger = p.kind;
  dump_options.details = details;
  dump_options.note = join(p.notes, " | ");
  // Its own dumps catch up from the rings too (from_topics, the default), as `flashback dump` does:
  // on this thread, at the caller's priority, what its taps have not taken yet is read by a second
  // tap of each topic in this process (tests/core/test_second_tap.cpp).
  auto dumped = dump_to_file(store, path, dump_options);
  if (!dumped) {
    say(recording::EventKind::Problem, path, fmt::format("dump failed ({}: {}): {}", p.kind, details, dumped.message()));
    return;
  }
  for (const auto& line : dumped->skipped) {
    say(recording::EventKind::Warning, dumped->path, "skipped (the store is damaged): " + line);
  }
  dump_times_.push_back(steady_ns());
  {
    std::lock_guard lock(mutex_);
    last_dump_ = *dumped;
  }
  say(recording::EventKind::Info, dumped->path,
      fmt::format("wrote {} ({}: {}): {} messages on {} topic{}, {:.1f} s, {}", dumped->path, p.kind, details,
                  dumped->messages, dumped->topics.size(), dumped->topics.size() == 1 ? "" : "s",
                  static_cast<double>(dumped->window_end_ns - dumped->window_start_ns) / 1e9,
                  amount(static_cast<double>(dumped->file_bytes))));
}

}  // namespace cerulion::flashback::detail
