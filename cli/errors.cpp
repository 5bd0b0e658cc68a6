// SPDX-License-Identifier: Apache-2.0
#include "errors.hpp"

#include <csignal>

#include <fmt/core.h>

#include "cerulion/core/stop.hpp"

namespace cerulion::cli {
namespace {

bool sized_by_option(const Status& status, const ErrorContext& context) {
  return status.code() == ErrorCode::PayloadTooLarge && status.subject().kind == SubjectKind::Size &&
         !context.size_option.empty();
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // C1 controls (U+0080..U+009F) are encoded as C2 80..C2 9F; a terminal may obey them.
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0 &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80;
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c1) {
      out += fmt::format("\\xc2\\x{:02x}", static_cast<unsigned char>(text[++i]));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

int stop_exit_code() {
  const int sig = cerulion::stop_signal();
  return sig != 0 ? 128 + sig : kExitInterrupted;
}

int finished_exit_code() {
  const int sig = cerulion::stop_signal();
  return sig == 0 || sig == SIGINT ? kExitOk : stop_exit_code();
}

int exit_code(const Status& status, const ErrorContext& context) {
  if (status.ok()) return kExitOk;
  if (status.code() == ErrorCode::Interrupted) return stop_exit_code();
  if (sized_by_option(status, context)) return kExitUsage;
  switch (status.subject().kind) {
    case SubjectKind::Path:
    case SubjectKind::Process: return kExitFailure;  // what was found there, not what was typed
    case SubjectKind::Option:
    case SubjectKind::Pattern: return kExitUsage;
    default: break;
  }
  switch (status.code()) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::InvalidTopicName: return kExitUsage;
    default: return kExitFailure;
  }
}

Exit failure(const Status& status, const ErrorContext& context) {
  const int code = exit_code(status, context);
  if (status.ok() || status.code() == ErrorCode::Interrupted) return {code, {}};  // a stop says nothing
  const Subject& subject = status.subject();
  std::string line;
  if (sized_by_option(status, context)) {
    // The library's message names no option; the user typed this one.
    line = fmt::format("{} {} is over the topic's ceiling of {} bytes", context.size_option, subject.asked,
                       subject.ceiling);
  } else {
    line = status.message().empty() ? std::string(to_string(status.code())) : status.message();
  }
  if (!context.what.empty() && (subject.empty() || subject.name != context.what)) {
    line = fmt::format("{}: {}", context.what, line);
  }
  return {code, printable(line)};
}

void check(const Status& status, const ErrorContext& context) {
  if (!status.ok()) throw failure(status, context);
}

}  // namespace cerulion::cli
