// SPDX-License-Identifier: Apache-2.0
// Starting and stopping iceoryx's RouDi; see transport_iceoryx.hpp.

#include "transport_iceoryx.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cerulion::measurement::iceoryx {
namespace {

/// Where iceoryx 2.0 puts RouDi's socket and lock, and its shared memory (the payload segment is
/// named after the user).
constexpr const char* kRoudiSocket = "/tmp/roudi";
constexpr const char* kRoudiLock = "/tmp/roudi.lock";
constexpr const char* kMgmtSegment = "/dev/shm/iceoryx_mgmt";

/// Chunks per large pool: the requester's loan, the responder's loan, and both subscriber queues
/// (10 each, as ROS 2's keep last 10) full, with room to spare. Only touched chunks cost memory.
constexpr std::uint64_t kLargeChunks = 24;
/// Small chunks: stop requests and small payloads.
constexpr std::uint64_t kSmallChunkBytes = 1024;
constexpr std::uint64_t kSmallChunks = 64;

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    // RouDi colours its log; keep the words.
    std::string plain;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      plain += line[i];
    }
    if (plain.find_first_not_of(" \t") != std::string::npos) last = plain;
  }
  return last;
}

std::string user_name() {
  std::vector<char> buffer(4096);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->pw_name;
  return {};
}

/// The largest `size` of the `[[segment.mempool]]` entries in a RouDi config; 0 when none.
std::uint64_t largest_pool(std::istream& config) {
  std::uint64_t largest = 0;
  for (std::string line; std::getline(config, line);) {
    line.erase(std::remove_if(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; }), line.end());
    if (line.rfind("size=", 0) == 0) largest = std::max<std::uint64_t>(largest, std::strtoull(line.c_str() + 5, nullptr, 10));
  }
  return largest;
}

/// The pid holding RouDi's lock, from /proc/locks; 0 when none.
pid_t roudi_pid() {
  struct stat st {};
  if (stat(kRoudiLock, &st) != 0) return 0;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    // "1: FLOCK  ADVISORY  WRITE 1234 00:1b:5678 0 EOF"
    std::istringstream fields(line);
    std::string n, kind, advisory, access, device;
    long pid = 0;
    fields >> n >> kind >> advisory >> access >> pid >> device;
    const auto colon = device.rfind(':');
    if (colon == std::string::npos) continue;
    if (std::strtoull(device.c_str() + colon + 1, nullptr, 10) == st.st_ino) return static_cast<pid_t>(pid);
  }
  return 0;
}

}  // namespace

std::optional<std::uint64_t> running_roudi_max_payload() {
  const pid_t pid = roudi_pid();
  if (pid <= 0) return std::nullopt;
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmdline) return std::nullopt;
  std::vector<std::string> args;
  for (std::string arg; std::getline(cmdline, arg, '\0');) args.push_back(arg);
  if (args.empty()) return std::nullopt;  // another user's process
  std::string config;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-c" || args[i] == "--config-file") && i + 1 < args.size()) config = args[i + 1];
    if (args[i].rfind("--config-file=", 0) == 0) config = args[i].substr(14);
  }
  // RouDi's own fallbacks when started without a config.
  if (config.empty() && access("/etc/iceoryx/roudi_config.toml", R_OK) == 0) config = "/etc/iceoryx/roudi_config.toml";
  if (config.empty()) return std::uint64_t{4u << 20};  // iceoryx 2.0's built-in pools end at 4 MiB
  if (config[0] != '/') config = "/proc/" + std::to_string(pid) + "/cwd/" + config;
  std::ifstream in(config);
  if (!in) return std::nullopt;
  const std::uint64_t largest = largest_pool(in);
  if (largest == 0) return std::nullopt;
  return largest;
}

std::string roudi_path() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  dirs.insert(dirs.end(), {"/usr/bin", "/usr/local/bin"});
  for (const auto& dir : dirs) {
    std::string candidate = dir + "/iox-roudi";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

bool roudi_running() noexcept {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, kRoudiSocket, sizeof(addr.sun_path) - 1);
  // A socket file left by a RouDi that died refuses the connection.
  const bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return up;
}

std::string unavailable_reason() {
#if CERULION_MEASUREMENT_HAVE_ICEORYX
  if (roudi_path().empty() && !roudi_running()) return "iox-roudi not found (Debian package iceoryx)";
  return {};
#else
  return "built without iceoryx (libiceoryx-posh-dev was not found)";
#endif
}

std::string roudi_config(std::uint64_t max_payload) {
  // Pools at 1 KiB, 64 KiB, 1 MiB, 16 MiB... up to the largest payload: a chunk comes from the
  // smallest pool that holds it, so small requests never take a large chunk. Sizes are payload
  // bytes (RouDi adds the chunk header) and multiples of 8.
  max_payload = (std::max<std::uint64_t>(max_payload, kSmallChunkBytes) + 7) / 8 * 8;
  std::ostringstream out;
  out << "# Written by cerulion for its iceoryx transport.\n[general]\nversion = 1\n\n[[segment]]\n";
  auto pool = [&](std::uint64_t size, std::uint64_t count) {
    out << "\n[[segment.mempool]]\nsize = " << size << "\ncount = " << count << "\n";
  };
  pool(kSmallChunkBytes, kSmallChunks);
  for (std::uint64_t size = kSmallChunkBytes * 64; size < max_payload; size *= 16) pool(size, kLargeChunks);
  if (max_payload > kSmallChunkBytes) pool(max_payload, kLargeChunks);
  return out.str();
}

Result<Roudi> Roudi::start(std::uint64_t max_payload, std::chrono::nanoseconds timeout) {
  const std::string binary = roudi_path();
  if (binary.empty()) return Status{ErrorCode::NotFound, "iox-roudi not found (Debian package iceoryx)"};
  if (roudi_running()) return Status{ErrorCode::Incompatible, "a RouDi is already running on this machine"};

  std::string dir = (std::filesystem::temp_directory_path() / "cerulion-roudi-XXXXXX").string();
  if (!mkdtemp(dir.data())) return Status{ErrorCode::SystemError, std::string("iceoryx: cannot create a temporary directory: ") + std::strerror(errno)};
  const std::string config = dir + "/roudi.toml";
  const std::string log = dir + "/roudi.log";
  {
    std::ofstream out(config);
    out << roudi_config(max_payload);
    if (!out) {
      std::filesystem::remove_all(dir);
      return Status{ErrorCode::SystemError, "iceoryx: cannot write " + config};
    }
  }

  // RouDi joins this process's group (a Ctrl-C at the terminal reaches it with its users) and
  // dies with the thread that started it, so a crashed caller leaves none behind.
  ChildOptions child;
  child.argv = {"iox-roudi", "-c", config, "-l", "warning", "-k", "2"};  // -k: SIGKILL for stragglers after 2 s, not 45
  child.program = binary;
  child.out = child.err = Stream::File;
  child.out_file = log;
  child.err_file = log;
  child.own_process_group = false;
  auto process = ChildProcess::start(child);
  if (!process) {
    std::filesystem::remove_all(dir);
    return Status{ErrorCode::SystemError, "iceoryx: cannot start iox-roudi: " + process.message()};
  }

  Roudi roudi;
  roudi.process_ = std::move(*process);
  roudi.max_payload_ = (std::max<std::uint64_t>(max_payload, kSmallChunkBytes) + 7) / 8 * 8;
  roudi.dir_ = dir;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!roudi.process_.running()) {
      const ChildExit end = roudi.process_.wait();
      roudi.process_ = ChildProcess();
      std::string why = last_line(log);
      if (why.empty()) why = end.signal ? "killed by signal " + std::to_string(end.signal) : "exit status " + std::to_string(end.exit_code);
      return Status{ErrorCode::SystemError, "iox-roudi did not start: " + why};
    }
    if (roudi_running()) return roudi;
    if (std::chrono::steady_clock::now() >= deadline) {
      (void)roudi.stop();
      return Status{ErrorCode::Timeout, "iox-roudi did not come up within the timeout"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Roudi::Roudi(Roudi&& other) noexcept
    : process_(std::move(other.process_)), max_payload_(other.max_payload_), dir_(std::move(other.dir_)) {
  other.dir_.clear();
}

Roudi& Roudi::operator=(Roudi&& other) noexcept {
  if (this != &other) {
    (void)stop();
    process_ = std::move(other.process_);
    max_payload_ = other.max_payload_;
    dir_ = std::move(other.dir_);
    other.dir_.clear();
  }
  return *this;
}

Roudi::~Roudi() { (void)stop(); }

Status Roudi::stop(std::chrono::nanoseconds timeout) {
  Status result;
  if (process_.pid() > 0) {
    const ChildExit end = process_.stop(timeout);
    process_ = ChildProcess();
    if (end.signal == SIGKILL) {
      // A killed RouDi cleans nothing; what it leaves is ours (it was the machine's only RouDi).
      std::error_code ignored;
      for (const std::string& path : {std::string(kRoudiSocket), std::string(kRoudiLock), std::string(kMgmtSegment),
                                      "/dev/shm/" + user_name()}) {
        if (path != "/dev/shm/") std::filesystem::remove(path, ignored);
      }
      result = {ErrorCode::Timeout, "iox-roudi did not stop within the timeout and was killed"};
    }
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    dir_.clear();
  }
  return result;
}

}  // namespace cerulion::measurement::iceoryx
