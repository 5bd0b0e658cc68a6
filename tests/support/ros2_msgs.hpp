// SPDX-License-Identifier: Apache-2.0
#pragma once
// ROS 2 message definitions for tests: Debian's test_msgs (ros2-test-interface-files, installed
// flat in /usr/share/test_interface_files/msg) laid out as a msg path (DIR/test_msgs/msg/T.msg),
// and a few common types written here as their packages define them (Jazzy).

#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir.hpp"

namespace cerulion::test {

/// Debian's test_msgs folder, "" when the package is not installed (the test then says it skipped).
inline std::string test_msgs_dir() {
  const std::string dir = "/usr/share/test_interface_files/msg";
  return std::filesystem::exists(dir + "/BasicTypes.msg") ? dir : std::string();
}

/// The text of test_msgs/msg/<name>.msg ("" when absent).
inline std::string test_msg_text(const std::string& name) {
  std::ifstream in(test_msgs_dir() + "/" + name + ".msg");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Common message packages, as their .msg files say (comments left out).
inline const std::pair<const char*, const char*> kCommonMsgs[] = {
    {"std_msgs/msg/String", "string data\n"},
    {"std_msgs/msg/Header", "builtin_interfaces/Time stamp\nstring frame_id\n"},
    {"geometry_msgs/msg/Point", "float64 x\nfloat64 y\nfloat64 z\n"},
    {"geometry_msgs/msg/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"},
    {"geometry_msgs/msg/Pose", "Point position\nQuaternion orientation\n"},
    {"geometry_msgs/msg/PoseStamped", "std_msgs/Header header\nPose pose\n"},
    {"sensor_msgs/msg/Image",
     "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\n"
     "uint8[] data\n"},
    {"sensor_msgs/msg/PointField",
     "uint8 INT8    = 1\nuint8 UINT8   = 2\nuint8 INT16   = 3\nuint8 UINT16  = 4\nuint8 INT32   = 5\n"
     "uint8 UINT32  = 6\nuint8 FLOAT32 = 7\nuint8 FLOAT64 = 8\nstring name\nuint32 offset\nuint8  datatype\n"
     "uint32 count\n"},
    {"sensor_msgs/msg/PointCloud2",
     "std_msgs/Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool    is_bigendian\n"
     "uint32  point_step\nuint32  row_step\nuint8[] data\nbool is_dense\n"},
};

/// A msg path folder (DIR/<pkg>/msg/<T>.msg) with kCommonMsgs and, where installed, test_msgs;
/// made once per process.
inline std::string ros2_msg_path() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    const fs::path root = fresh_temp_path("msgs");
    for (const auto& [name, text] : kCommonMsgs) {
      const std::string full = name;
      const auto pkg = full.substr(0, full.find('/'));
      const auto type = full.substr(full.rfind('/') + 1);
      fs::create_directories(root / pkg / "msg");
      std::ofstream(root / pkg / "msg" / (type + ".msg")) << text;
    }
    if (!test_msgs_dir().empty()) {
      fs::create_directories(root / "test_msgs");
      fs::create_directory_symlink(test_msgs_dir(), root / "test_msgs" / "msg");
    }
    return root.string();
  }();
  return dir;
}

}  // namespace cerulion::test
