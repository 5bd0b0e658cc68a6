// SPDX-License-Identifier: Apache-2.0
#pragma once
// Topic and domain names, and how they map onto POSIX shared-memory segment names.
//
// A topic name looks like `/robot/camera_front`: components of [A-Za-z0-9_.-] separated by '/',
// at most 200 characters. A missing leading '/' is added. Empty names, empty components ("//"),
// "." and ".." components, a trailing '/' and any other character are refused, so a name can never
// escape the namespace. A domain is [A-Za-z0-9_-], 1..64 characters (default "default", or
// $CERULION_DOMAIN). The segment of topic `/robot/camera` in domain `default` is
// `/dev/shm/cerulion.default:robot:camera`: `ls /dev/shm` tells a person what is there. A file
// name has at most 255 bytes, so a domain and a topic may have 246 characters together (the
// longest of each do not fit side by side). Errors show a bad byte as \xHH.

#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"

namespace cerulion {

/// Longest topic name accepted, in characters (leading '/' included).
inline constexpr std::size_t kMaxTopicNameLength = 200;
/// Longest domain name accepted, in characters.
inline constexpr std::size_t kMaxDomainLength = 64;

/// The canonical form of a topic name ("a/b" becomes "/a/b"), or InvalidTopicName saying why.
Result<std::string> normalize_topic_name(std::string_view name);

/// Ok, or InvalidTopicName saying what is wrong with the domain name.
Status validate_domain(std::string_view domain);

/// Longest file name /dev/shm takes (NAME_MAX): a segment's name without its leading '/'.
inline constexpr std::size_t kMaxSegmentFileNameLength = 255;

/// Ok, or InvalidArgument naming both lengths and the limit when a valid domain and a normalized
/// topic are too long together for a segment file name.
Status validate_segment_name(std::string_view domain, std::string_view normalized_topic);

/// $CERULION_DOMAIN when it is set and non-empty, else "default".
std::string default_domain();

/// The shared-memory object name (with its leading '/') for a normalized topic in a domain.
std::string segment_name(std::string_view domain, std::string_view normalized_topic);

/// The prefix every segment name of a domain starts with, e.g. "cerulion.default:".
std::string segment_prefix(std::string_view domain);

/// The topic a segment file name (as listed in /dev/shm, without '/') stands for, or "" if the
/// name is not a cerulion segment of that domain.
std::string topic_from_segment_file(std::string_view domain, std::string_view file_name);

}  // namespace cerulion
