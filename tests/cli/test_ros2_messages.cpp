// SPDX-License-Identifier: Apache-2.0
// ROS 2 messages in pub and echo through the real binary: pub --type takes JSON or YAML flow as
// `ros2 topic pub` does, echo prints fields as `ros2 topic echo` does (and JSON objects with --json).

#include <catch2/catch.hpp>

#include <fstream>

#include "everyday_helpers.hpp"
#include "process.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion::test;

namespace {

std::vector<std::string> with_msg_path(std::vector<std::string> args) {
  args.push_back("--msg-path");
  args.push_back(ros2_msg_path());
  return args;
}

}  // namespace

TEST_CASE("pub --type encodes YAML flow and JSON messages that echo prints as fields", "[cli][pub][echo][ros2]") {
  const std::string topic = unique_topic("ros2_pose");
  BackgroundProcess text(with_msg_path({cerulion_binary(), "echo", topic, "-n", "2"}));
  BackgroundProcess json(with_msg_path({cerulion_binary(), "echo", topic, "-n", "2", "--json"}));
  auto pub = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "geometry_msgs/msg/PoseStamped",
                                        "{header: {frame_id: map}, pose: {position: {x: 1.5, y: -2}}}",
                                        R"({"pose": {"orientation": {"w": 0.5}}})", "-n", "1", "-r", "0",
                                        "--wait-subscribers", "2", "--timeout", "30"}));
  INFO(pub.err);
  REQUIRE(pub.exit_code == 0);
  auto printed = text.wait(std::chrono::seconds(30));
  REQUIRE(printed.exit_code == 0);
  CHECK(printed.out.find("header:\n  stamp:\n    sec: 0\n    nanosec: 0\n  frame_id: map\npose:\n  position:\n"
                         "    x: 1.5\n    y: -2.0\n    z: 0.0\n  orientation:\n    x: 0.0\n    y: 0.0\n    z: 0.0\n"
                         "    w: 1.0\n---\n") == 0);
  CHECK(printed.out.find("    w: 0.5\n---\n") != std::string::npos);
  auto lines = json_lines(json.wait(std::chrono::seconds(30)).out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["data"]["pose"]["position"]["y"] == -2.0);
  CHECK(lines[1]["data"]["header"]["frame_id"] == "");
}

TEST_CASE("echo shows a ROS 2 byte array as its length and a preview, base64 in JSON, all of it with --full",
          "[cli][echo][ros2]") {
  const std::string topic = unique_topic("ros2_image");
  BackgroundProcess text(with_msg_path({cerulion_binary(), "echo", topic, "-n", "1"}));
  BackgroundProcess full(with_msg_path({cerulion_binary(), "echo", topic, "-n", "1", "--full"}));
  BackgroundProcess json(with_msg_path({cerulion_binary(), "echo", topic, "-n", "1", "--json"}));
  std::string data = "[";
  for (int i = 0; i < 20; ++i) data += (i ? "," : "") + std::to_string(i);
  data += "]";
  auto pub = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "sensor_msgs/msg/Image",
                                        "{height: 1, width: 20, encoding: mono8, step: 20, data: " + data + "}", "-n", "1",
                                        "--wait-subscribers", "3", "--timeout", "30"}));
  REQUIRE(pub.exit_code == 0);
  CHECK(text.wait(std::chrono::seconds(30)).out.find("data: <20 bytes: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f ...>\n") !=
        std::string::npos);
  CHECK(full.wait(std::chrono::seconds(30)).out.find("0f 10 11 12 13>\n") != std::string::npos);
  auto lines = json_lines(json.wait(std::chrono::seconds(30)).out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["data"]["data"] == "AAECAwQFBgcICQoLDA0ODxAREhM=");
}

TEST_CASE("pub names the field of a message that does not fit its ROS 2 type and publishes nothing",
          "[cli][pub][ros2]") {
  const std::string topic = unique_topic("ros2_bad");
  auto pub = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "geometry_msgs/msg/PoseStamped",
                                        "{pose: {position: {y: north}}}", "-n", "1"}));
  CHECK(pub.exit_code == 1);
  CHECK(pub.err == "cerulion: argument 1: geometry_msgs/msg/PoseStamped field pose.position.y: \"north\" is not a "
                   "number; nothing published\n");
}

TEST_CASE("pub --type refuses a name not of the form pkg/msg/T and a type not on the msg path", "[cli][pub][ros2]") {
  const std::string topic = unique_topic("ros2_names");
  auto form = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "geometry_msgs/Pose", "{}", "-n", "1"}));
  CHECK(form.exit_code == 2);
  CHECK(form.err.find("'geometry_msgs/Pose' is not of the form pkg/msg/T") != std::string::npos);
  auto unknown = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "robot_msgs/msg/Secret", "{}", "-n", "1"}));
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("no .msg file for robot_msgs/msg/Secret on the msg path") != std::string::npos);
}

TEST_CASE("pub sends a file that is CDR already as it is", "[cli][pub][ros2]") {
  const std::string topic = unique_topic("ros2_cdr_file");
  const std::string file = fresh_temp_path("point.cdr");
  {
    std::ofstream out(file, std::ios::binary);
    const unsigned char header[4] = {0, 1, 0, 0};
    out.write(reinterpret_cast<const char*>(header), 4);
    for (double v : {1.0, 2.0, 3.0}) out.write(reinterpret_cast<const char*>(&v), 8);
  }
  BackgroundProcess json(with_msg_path({cerulion_binary(), "echo", topic, "-n", "1", "--json"}));
  auto pub = run_process(with_msg_path({cerulion_binary(), "pub", topic, "--type", "geometry_msgs/msg/Point", "--file",
                                        file, "-n", "1", "--wait-subscribers", "1", "--timeout", "30"}));
  INFO(pub.err);
  REQUIRE(pub.exit_code == 0);
  auto lines = json_lines(json.wait(std::chrono::seconds(30)).out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["data"] == nlohmann::json{{"x", 1.0}, {"y", 2.0}, {"z", 3.0}});
}
