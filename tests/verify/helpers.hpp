// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the verify tests share: a recording of /imu inputs for the example filter node, that node's
// path, and the options that run it.

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recorder/writer.hpp"
#include "cerulion/verify/verification.hpp"
#include "messages.hpp"
#include "temp_dir.hpp"

namespace cerulion::test {

inline constexpr std::uint64_t kVerifyFirstLogTime = 1'700'000'000'000'000'000ull;

/// A recording of `count` Imu structs on `topic` (100 Hz of log time), and nothing else.
inline std::string write_imu_inputs(std::size_t count, const std::string& topic = "/imu") {
  const std::string path = fresh_temp_path("inputs.mcap");
  auto writer = recorder::Writer::create(path);
  REQUIRE(writer.ok());
  auto channel = writer->add_channel(topic, recorder::profile::kMessageEncoding);
  REQUIRE(channel.ok());
  for (std::size_t n = 0; n < count; ++n) {
    const double t = static_cast<double>(n) / 100.0;
    const example::Imu imu{.index = n,
                           .orientation = {0.0, 0.0, std::sin(t / 4), std::cos(t / 4)},
                           .angular_velocity = {0.0, 0.0, 0.5 + 0.1 * std::sin(t)},
                           .linear_acceleration = {0.1 * std::cos(t), 0.0, 9.81}};
    const std::uint64_t at = kVerifyFirstLogTime + n * 10'000'000ull;
    REQUIRE(writer->write(*channel, static_cast<std::uint32_t>(n), at, at, std::as_bytes(std::span(&imu, 1))).ok());
  }
  REQUIRE(writer->close().ok());
  return path;
}

/// `write_imu_inputs(count)` with a json tick `{"ns": ...}` on `clock_topic` just before each
/// input, as the filter node's `--clock TOPIC` reads it: a recording with two input topics.
inline std::string write_imu_inputs_with_clock(std::size_t count, const std::string& clock_topic) {
  const std::string path = fresh_temp_path("inputs-clock.mcap");
  auto writer = recorder::Writer::create(path);
  REQUIRE(writer.ok());
  auto imu_channel = writer->add_channel("/imu", recorder::profile::kMessageEncoding);
  auto tick_channel = writer->add_channel(clock_topic, "json");
  REQUIRE(imu_channel.ok());
  REQUIRE(tick_channel.ok());
  for (std::size_t n = 0; n < count; ++n) {
    const example::Imu imu{.index = n,
                           .orientation = {0.0, 0.0, 0.0, 1.0},
                           .angular_velocity = {0.0, 0.0, 0.5},
                           .linear_acceleration = {0.1 * static_cast<double>(n), 0.0, 9.81}};
    const std::uint64_t at = kVerifyFirstLogTime + n * 10'000'000ull;
    const std::string tick = "{\"ns\":" + std::to_string(at) + "}";
    REQUIRE(writer->write(*tick_channel, static_cast<std::uint32_t>(n), at - 1, at - 1, std::as_bytes(std::span(tick))).ok());
    REQUIRE(writer->write(*imu_channel, static_cast<std::uint32_t>(n), at, at, std::as_bytes(std::span(&imu, 1))).ok());
  }
  REQUIRE(writer->close().ok());
  return path;
}

/// The example filter node with `args`.
inline std::vector<std::string> imu_filter(std::vector<std::string> args = {}) {
  args.insert(args.begin(), VERIFY_IMU_FILTER);
  return args;
}

/// Options that verify `recording` with the filter node given `args`.
inline verify::VerifyOptions imu_verify_options(const std::string& recording, std::vector<std::string> args = {}) {
  verify::VerifyOptions o;
  o.recording = recording;
  o.run.command = imu_filter(std::move(args));
  o.run.inputs = {"/imu"};
  o.run.outputs = {"/imu/filtered"};
  return o;
}

/// A golden file: the filter node's outputs over `count` inputs, kept by a verification.
inline std::string record_golden(std::size_t count) {
  auto o = imu_verify_options(write_imu_inputs(count));
  o.keep = fresh_temp_path("golden.mcap");
  // Without recorded outputs, an input's outputs are those before the quiet that follows it: on a
  // loaded machine the default quiet may come before a slow answer, and the golden would place it
  // after the next input.
  o.run.settle = std::chrono::milliseconds(300);
  const auto v = verify::verify(o);
  INFO(v.problem);
  REQUIRE(v.verdict == verify::Verdict::Same);
  return o.keep;
}

/// `record_golden(count)` with its outputs on `topic` instead: a topic the node never publishes.
inline std::string golden_with_output_renamed(std::size_t count, const std::string& topic) {
  auto reader = recorder::Reader::open(record_golden(count));
  REQUIRE(reader.ok());
  const std::string renamed = fresh_temp_path("renamed.mcap");
  auto writer = recorder::Writer::create(renamed);
  REQUIRE(writer.ok());
  auto in = writer->add_channel("/imu", recorder::profile::kMessageEncoding);
  auto out = writer->add_channel(topic, "json");
  REQUIRE(in.ok());
  REQUIRE(out.ok());
  REQUIRE(reader->read_messages({}, [&](const recorder::MessageView& m) {
    const auto channel = m.channel.topic == "/imu" ? *in : *out;
    return writer->write(channel, m.message.sequence, m.message.log_time, m.message.publish_time, m.message.data).ok();
  }).ok());
  REQUIRE(writer->close().ok());
  return renamed;
}

/// Checks that the last of `count` /imu/filtered outputs kept in `path` is stamped with the log
/// time of the last of `count` inputs (as --clock gives it).
inline void check_last_output_stamped(const std::string& path, std::size_t count) {
  auto reader = recorder::Reader::open(path);
  REQUIRE(reader.ok());
  auto outputs = verify::read_topics(*reader, {.topics = {"/imu/filtered"}});
  REQUIRE(outputs.ok());
  REQUIRE(outputs->size() == 1);
  REQUIRE(outputs->front().messages.size() == count);
  const auto& last = outputs->front().messages.back().data;
  const std::string text(reinterpret_cast<const char*>(last.data()), last.size());
  CHECK(text.find("\"stamp_ns\":" + std::to_string(kVerifyFirstLogTime + (count - 1) * 10'000'000ull)) != std::string::npos);
}

}  // namespace cerulion::test
