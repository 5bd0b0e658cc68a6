// SPDX-License-Identifier: Apache-2.0
// Creating, opening, taking over, listing and removing stores.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/core/detail/liveness.hpp"
#include "cerulion/core/detail/shm_directory.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/core/options.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback {

using cerulion::detail::MappedRegion;
using cerulion::detail::ShmFile;
using namespace detail;

namespace {

constexpr std::string_view kFilePrefix = cerulion::detail::kFlashbackStore.prefix;

std::string what_of(std::string_view domain, std::string_view name) {
  return fmt::format("flashback store '{}' of domain '{}'", name, domain);
}

void copy_name(char (&out)[72], std::string_view s) {
  std::memset(out, 0, sizeof out);
  std::memcpy(out, s.data(), std::min(s.size(), sizeof out - 1));
}

// Maps an opened store file after checking it is sound.
Result<std::unique_ptr<StoreImpl>> map_existing(cerulion::detail::OpenedObject opened, const std::string& path,
                                                const std::string& what) {
  ShmFile file = std::move(opened.file);
  const auto size = static_cast<std::uint64_t>(opened.st.st_size);
  StoreHeader h{};
  if (size < sizeof(StoreHeader) || !cerulion::detail::read_unmapped(file.fd(), &h, sizeof h, 0)) {
    return Status(ErrorCode::Corrupted, fmt::format("{}: {} is too short to be a flashback store", what, path));
  }
  if (auto st = cerulion::detail::check_header(&h, kStoreRule, what); !st) return st;
  if (auto problem = check_layout(h, size); !problem.empty()) {
    return Status(ErrorCode::Corrupted, fmt::format("{} is damaged: {}", what, problem));
  }
  // The fixed part is written at creation; a page of it that was not would need memory a full
  // /dev/shm may not have (SIGBUS) when touched. Chunk data is read only where it was reserved.
  if (!cerulion::detail::fully_written(file.fd(), h.data_offset)) {
    return Status(ErrorCode::Corrupted, fmt::format("{} is damaged: memory it counts on was never written", what));
  }
  auto map = MappedRegion::map(file.fd(), 0, size, true, what);
  if (!map) return map.status();
  return std::make_unique<StoreImpl>(std::move(file), std::move(*map), path);
}

/// Opens and maps the store file `file_name` for use (core's owner/group rule).
Result<std::unique_ptr<StoreImpl>> open_existing(const std::string& file_name, const std::string& what) {
  auto opened = cerulion::detail::open_object(cerulion::detail::kFlashbackStore, file_name, true,
                                              cerulion::detail::ShmUse::Join, what);
  if (!opened) return opened.status();
  return map_existing(std::move(*opened), cerulion::detail::shm_path(file_name), what);
}

Result<std::unique_ptr<StoreImpl>> create_store(std::string_view domain, std::string_view name,
                                                const StoreLimits& limits, const std::string& what) {
  // Each staging buffer holds two chunks, or more where memory allows: room for what comes while
  // the other is compressed, on a busy machine.
  const std::uint64_t staging_capacity =
      round_to_page(std::max(2 * limits.chunk_size, std::min(kStagingRoom, limits.memory_bytes / 4)));
  const std::uint64_t keeper_record_offset = kStorePage;
  const std::uint64_t dump_records_offset = round_to_page(keeper_record_offset + sizeof(KeeperRecord));
  const std::uint64_t channels_offset = round_to_page(dump_records_offset + kDumpRecords * sizeof(DumpRecord));
  const std::uint64_t slots_offset = round_to_page(channels_offset + kMaxChannels * sizeof(ChannelEntry));
  const std::uint64_t staging_offset = round_to_page(slots_offset + kChunkSlots * sizeof(ChunkSlot));
  const std::uint64_t data_offset = staging_offset + kStagingBuffers * staging_capacity;
  const std::uint64_t data_capacity = round_to_page(limits.memory_bytes);
  const std::uint64_t types_offset = data_offset + data_capacity;
  const std::uint64_t total = types_offset + kTypesCapacity;

  auto file = ShmFile::create({.mode = 0600, .group = std::nullopt, .size = total, .committed = data_offset}, what);
  if (!file) return file.status();
  auto map = MappedRegion::map(file->fd(), 0, total, true, what);
  if (!map) return map.status();
  // Written through, so readers can tell a complete store from a damaged one (fully_written).
  std::memset(map->address(), 0, data_offset);
  auto* h = new (map->address()) StoreHeader{};
  h->stamp = cerulion::detail::make_stamp(kStoreRule);
  h->total_bytes = total;
  h->keeper_record_offset = keeper_record_offset;
  h->dump_records_offset = dump_records_offset;
  h->channels_offset = channels_offset;
  h->slots_offset = slots_offset;
  h->staging_offset = staging_offset;
  h->staging_capacity = staging_capacity;
  h->data_offset = data_offset;
  h->data_capacity = data_capacity;
  h->types_offset = types_offset;
  h->types_capacity = kTypesCapacity;
  h->max_channels = kMaxChannels;
  h->chunk_slots = kChunkSlots;
  copy_name(h->domain, domain);
  copy_name(h->name, name);
  h->created_realtime_ns = realtime_ns();
  h->layout_checksum = cerulion::detail::header_checksum(h, kStoreRule);
  h->usable_bytes.store(data_capacity);
  // The keeper's lock is taken before the store has a name, so nobody else can take it first.
  if (::flock(file->fd(), LOCK_EX | LOCK_NB) != 0) return cerulion::detail::system_error(what, errno);
  const std::string file_name = store_file_name(domain, name);
  auto impl = std::make_unique<StoreImpl>(std::move(*file), std::move(*map), cerulion::detail::shm_path(file_name));
  auto named = ShmFile(::dup(impl->fd())).publish_as(file_name, what);
  if (!named) return named.status();
  if (!*named) return Status(ErrorCode::Incompatible, "exists");  // lost a race: open the other one
  return impl;
}

}  // namespace

Status validate_keeper_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxKeeperName) {
    return Status(ErrorCode::InvalidArgument, fmt::format("keeper name '{}': 1 to {} characters", name, kMaxKeeperName));
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) {
      return Status(ErrorCode::InvalidArgument,
                    fmt::format("keeper name '{}': only letters, digits, '_' and '-' are allowed", name));
    }
  }
  return {};
}

std::string store_file_name(std::string_view domain, std::string_view name) {
  return fmt::format("{}{}.{}", kFilePrefix, domain, name);
}

std::string detail::check_layout(const StoreHeader& h, std::uint64_t file_size) {
  if (h.total_bytes != file_size) return fmt::format("{} bytes where the header says {}", file_size, h.total_bytes);
  if (h.max_channels != kMaxChannels || h.chunk_slots != kChunkSlots) return "table sizes differ";
  if (h.keeper_record_offset > h.total_bytes || h.dump_records_offset > h.total_bytes ||
      h.keeper_record_offset < kStorePage || h.dump_records_offset < h.keeper_record_offset + sizeof(KeeperRecord) ||
      h.channels_offset < h.dump_records_offset + std::uint64_t(kDumpRecords) * sizeof(DumpRecord) ||
      h.slots_offset < h.channels_offset + std::uint64_t(h.max_channels) * sizeof(ChannelEntry) ||
      h.staging_offset < h.slots_offset + std::uint64_t(h.chunk_slots) * sizeof(ChunkSlot) ||
      h.staging_capacity > h.total_bytes ||
      h.data_offset < h.staging_offset + kStagingBuffers * h.staging_capacity || h.types_offset != h.data_offset + h.data_capacity ||
      h.types_offset + h.types_capacity != h.total_bytes) {
    return "its areas overlap or run past the end";
  }
  const auto head = h.head.load(), tail = h.tail.load();
  if (tail > head) return fmt::format("oldest chunk {} is past the next one {}", tail, head);
  if (head - tail > h.chunk_slots) return "more chunks than slots";
  if (h.usable_bytes.load() > h.data_capacity || h.reserved_bytes.load() > h.data_capacity ||
      h.write_offset.load() > h.data_capacity) {
    return "its data positions run past the data area";
  }
  for (const auto& b : h.staging) {
    if (b.length.load() > h.staging_capacity) return "its staging area runs past its end";
  }
  if (h.types_length.load() > h.types_reserved.load() || h.types_reserved.load() > h.types_capacity) {
    return "its topic types run past their area";
  }
  if (h.channel_count.load() > h.max_channels) return "more channels than the table holds";
  return "";
}

Store::Store(std::unique_ptr<StoreImpl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;
const std::string& Store::path() const noexcept { return impl_->path(); }
bool Store::taken_over() const noexcept { return impl_->taken_over; }
StoreDamage Store::damage_found() const noexcept { return impl_->damage_found; }
StoreStatus Store::status() const { return impl_->status(); }

Result<Store> Store::open(std::string_view domain, std::string_view name) {
  if (auto st = validate_domain(domain); !st) return st;
  if (auto st = validate_keeper_name(name); !st) return st;
  auto impl = open_existing(store_file_name(domain, name), what_of(domain, name));
  if (impl.code() == ErrorCode::NotFound) {
    return Status(ErrorCode::NotFound,
                  fmt::format("no flashback store named '{}' in domain '{}': no keeper runs there now", name, domain));
  }
  if (!impl) return impl.status();
  return Store(std::move(*impl));
}

Result<Store> Store::open_for_keeper(std::string_view domain, std::string_view name, StoreLimits limits) {
  if (auto st = validate_domain(domain); !st) return st;
  if (auto st = validate_keeper_name(name); !st) return st;
  if (!(limits.window_s > 0)) return Status(ErrorCode::InvalidArgument, "the window must be positive");
  if (limits.chunk_size < 4096 || limits.chunk_size > (256ull << 20)) {
    return Status(ErrorCode::InvalidArgument, "the chunk size must be between 4 KiB and 256 MiB");
  }
  if (limits.memory_bytes < 2 * limits.chunk_size) {
    return Status(ErrorCode::InvalidArgument, "the memory limit must hold at least two chunks");
  }
  const std::string what = what_of(domain, name);
  const std::string file_name = store_file_name(domain, name);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto impl = open_existing(file_name, what);
    if (impl.code() == ErrorCode::NotFound) {
      auto created = create_store(domain, name, limits, what);
      if (!created && created.code() == ErrorCode::Incompatible) continue;  // someone else created it
      if (!created) return created.status();
      (*created)->claim(limits);
      return Store(std::move(*created));
    }
    if (!impl) return impl.status();
    if (::flock((*impl)->fd(), LOCK_EX | LOCK_NB) != 0) {
      const auto pid = (*impl)->header().keeper_pid.load();
      return Status(ErrorCode::InvalidArgument,
                    fmt::format("a keeper named '{}' already runs in domain '{}' (pid {})", name, domain, pid),
                    Subject::process(std::to_string(pid)));
    }
    if (auto st = (*impl)->recover_after_keeper(); !st) return st;
    (*impl)->taken_over = (*impl)->header().head.load() > 0;
    (*impl)->claim(limits);
    return Store(std::move(*impl));
  }
  return Status(ErrorCode::SystemError, what + ": created and removed by others while opening it");
}

std::vector<StoreEntry> list_stores(std::string_view domain) {
  std::vector<StoreEntry> out;
  const std::string prefix = domain.empty() ? std::string() : store_file_name(domain, "");
  for (const auto& found : cerulion::detail::list_objects(cerulion::detail::kFlashbackStore, prefix)) {
    // Keeper names have no '.', domains may: the name is after the last one.
    const std::string_view rest = std::string_view(found.name).substr(kFilePrefix.size());
    const auto dot = rest.rfind('.');
    if (dot == std::string_view::npos) continue;
    StoreEntry entry;
    entry.domain = std::string(rest.substr(0, dot));
    entry.name = std::string(rest.substr(dot + 1));
    entry.path = found.path;
    if (!domain.empty() && entry.domain != domain) continue;
    if (!found.problem.empty()) {
      entry.problem = found.problem;
    } else if (!validate_domain(entry.domain) || !validate_keeper_name(entry.name)) {
      entry.problem = "not a valid store name";
    } else if (auto store = Store::open(entry.domain, entry.name); !store) {
      entry.problem = store.message();
    } else {
      entry.keeper_pid = impl_of(*store).header().keeper_pid.load();
      entry.alive = impl_of(*store).keeper_alive();
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Status remove_store(std::string_view domain, std::string_view name) {
  if (auto st = validate_domain(domain); !st) return st;
  if (auto st = validate_keeper_name(name); !st) return st;
  const std::string path = cerulion::detail::shm_path(store_file_name(domain, name));
  if (auto store = Store::open(domain, name); store && impl_of(*store).keeper_alive()) {
    const auto pid = impl_of(*store).header().keeper_pid.load();
    return Status(ErrorCode::InvalidArgument, fmt::format("{}: its keeper (pid {}) is running", what_of(domain, name), pid),
                  Subject::process(std::to_string(pid)));
  }
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status(ErrorCode::NotFound, fmt::format("no flashback store named '{}' in domain '{}'", name, domain));
    return cerulion::detail::system_error(what_of(domain, name), errno);
  }
  return {};
}

Result<std::uint32_t> stop_keeper(std::string_view domain, std::string_view name, double timeout_s) {
  auto store = Store::open(domain, name);
  if (!store) return store.status();
  const auto& h = impl_of(*store).header();
  if (!impl_of(*store).keeper_alive()) return std::uint32_t{0};
  const auto pid = static_cast<pid_t>(h.keeper_pid.load());
  const std::uint64_t start_time = h.keeper_start_time.load();
  const std::uint32_t pid_namespace = h.keeper_pid_namespace.load();
  const std::uint32_t own_namespace = cerulion::detail::own_pid_namespace();
  if (pid_namespace != 0 && own_namespace != 0 && pid_namespace != own_namespace) {
    // Its pid means another process here.
    return Status(ErrorCode::InvalidArgument,
                  fmt::format("{}: its keeper (pid {}) runs in another pid namespace (a container): stop it there",
                              what_of(domain, name), pid),
                  Subject::process(std::to_string(pid)));
  }
  if (::kill(pid, SIGTERM) != 0) {
    if (errno == ESRCH) return static_cast<std::uint32_t>(pid);  // gone meanwhile
    return cerulion::detail::system_error(fmt::format("cannot stop keeper pid {}", pid), errno);
  }
  // Its store is free for another keeper once the process is gone (its lock goes with it).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (cerulion::detail::process_alive(pid, start_time, pid_namespace)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(ErrorCode::Timeout, fmt::format("keeper pid {} was asked to stop (SIGTERM) and still runs after {:g} s; "
                                                    "gave up waiting for it",
                                                    pid, timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return static_cast<std::uint32_t>(pid);
}

}  // namespace cerulion::flashback
