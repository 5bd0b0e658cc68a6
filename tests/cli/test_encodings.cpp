// SPDX-License-Identifier: Apache-2.0
// Encodings and schemas through the real binary: pub declares a topic's type, checks a json topic's
// messages, and refuses what does not fit; echo and topic show what a topic carries.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/core.h>

#include "cerulion/core/publisher.hpp"
#include "everyday_helpers.hpp"
#include "process.hpp"
#include "protobuf_descriptors.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using nlohmann::json;

namespace {

constexpr const char* kImuSchema = R"({"type": "object", "properties": {"ax": {"type": "number"}}})";
/// pb::imu_descriptor_set(), checked in: package fb, message Imu with a nested Covariance.
const std::string kImuDesc = CERULION_SOURCE_DIR "/tests/cli/data/imu.desc";

/// A temp folder of schema files, removed with it.
struct SchemaFiles {
  std::filesystem::path dir = record_temp_path("schemas");
  SchemaFiles() { std::filesystem::create_directories(dir); }
  SchemaFiles(const SchemaFiles&) = delete;
  SchemaFiles& operator=(const SchemaFiles&) = delete;
  ~SchemaFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  /// `content` written to a file named `name` (so the schema's default name is its stem).
  std::string write(const std::string& name, const std::string& content) const {
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
};

}  // namespace

TEST_CASE("pub with a JSON Schema file declares the type that topic info shows", "[cli][pub][encoding]") {
  const std::string topic = unique_topic("typed_info");
  const SchemaFiles files;
  const auto schema = files.write("Imu.json", kImuSchema);
  BackgroundProcess holder({cerulion_binary(), "pub", topic, R"({"ax": 0.5})", "--encoding", "json", "--schema-file",
                            schema, "--wait-subscribers", "5", "--timeout", "60"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));

  auto info = topic_snapshot(topic);
  CHECK(info["message_encoding"] == "json");
  CHECK(info["type_declared"] == true);
  CHECK(info["schema"] == json{{"name", "Imu"}, {"encoding", "jsonschema"}, {"bytes", std::string(kImuSchema).size()}});

  auto text = run_cerulion({"topic", "info", topic});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("encoding:      json\n") != std::string::npos);
  CHECK(text.out.find(fmt::format("schema:        Imu (jsonschema, {} bytes)\n", std::string(kImuSchema).size())) !=
        std::string::npos);

  auto listing = run_cerulion({"topic", "list", "--json"});
  REQUIRE(listing.exit_code == 0);
  bool listed = false;
  const auto topics = json::parse(listing.out)["topics"];
  for (const auto& entry : topics) {
    if (entry["name"] != topic) continue;
    listed = true;
    CHECK(entry["message_encoding"] == "json");
    CHECK(entry["schema"]["name"] == "Imu");
  }
  CHECK(listed);

  SECTION("another encoding is refused with one line") {
    auto refused = run_cerulion({"pub", topic, "x", "--once", "--encoding", "protobuf", "--schema-file", kImuDesc});
    CHECK(refused.exit_code == 1);
    CHECK(refused.err == fmt::format("cerulion: topic '{}' carries json, schema Imu (jsonschema, {} B), not protobuf, "
                                     "schema fb.Imu (protobuf, 46 B)\n",
                                     topic, std::string(kImuSchema).size()));
  }
  SECTION("a pub without --encoding checks the lines of the topic its creator declared json") {
    auto refused = run_cerulion({"pub", topic}, "{\"ax\": 1}\nnot json\n");
    CHECK(refused.exit_code == 1);
    CHECK(text_lines(refused.err).size() == 1);
    CHECK(refused.err.find("cerulion: stdin line 2: not JSON: ") == 0);
  }
  holder.signal(SIGINT);
  holder.wait();
}

TEST_CASE("A bad JSON line exits 1 naming it, after publishing the lines before it", "[cli][pub][echo][encoding]") {
  const std::string topic = unique_topic("bad_json_line");
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "--json", "--timeout", "2"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));

  auto pub = run_cerulion({"pub", topic, "--encoding", "json", "--wait-subscribers", "1", "--timeout", "20"},
                          "1\n{\"a\": [2, 3]}\nnope\n[4]\n");
  CHECK(pub.exit_code == 1);
  REQUIRE(text_lines(pub.err).size() == 1);
  CHECK(pub.err.find("cerulion: stdin line 3: not JSON: parse error at line 1, column 2") == 0);
  CHECK(pub.err.find("it and what follows were not published") != std::string::npos);

  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 0);
  auto received = json_lines(echoed.out);
  REQUIRE(received.size() == 2);  // the lines before the bad one, as JSON values
  CHECK(received[0]["data"] == 1);
  CHECK(received[1]["data"].is_object());
  CHECK(received[1]["data"] == json{{"a", {2, 3}}});
  CHECK_FALSE(received[1].contains("json_error"));
}

TEST_CASE("pub --skip-invalid warns about each bad line, goes on and counts them", "[cli][pub][echo][encoding]") {
  const std::string topic = unique_topic("skip_invalid");
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "-n", "3"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));

  auto pub = run_cerulion(
      {"pub", topic, "--encoding", "json", "--skip-invalid", "--wait-subscribers", "1", "--timeout", "20"},
      "{\"n\": 1}\nx\n[2]\n{\"broken\": \n\"three\"\n");
  CHECK(pub.exit_code == 0);
  auto warnings = text_lines(pub.err);
  REQUIRE(warnings.size() == 3);
  CHECK(warnings[0].find("cerulion: warning: stdin line 2: not JSON: ") == 0);
  CHECK(warnings[1].find("cerulion: warning: stdin line 4: not JSON: ") == 0);
  CHECK(warnings[2] == "cerulion: skipped 2 of 5 messages (not valid json)");

  auto echoed = echo.wait();
  CHECK(echoed.exit_code == 0);
  CHECK(text_lines(echoed.out) == std::vector<std::string>{R"({"n":1})", "[2]", R"("three")"});  // compact JSON
}

TEST_CASE("Encoding mistakes are one line and touch no topic", "[cli][pub][encoding][faults]") {
  const std::string topic = unique_topic("encoding_mistakes");
  auto unknown = run_cerulion({"pub", topic, "{}", "--once", "--encoding", "jsn"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err == "cerulion: --encoding: unknown message encoding 'jsn' (known: json, protobuf, cdr, flatbuffer, "
                       "ros1, cbor, or a custom x-... name) (see 'cerulion pub --help')\n");

  auto custom = run_cerulion({"pub", topic, "{}", "--once", "--encoding", "x-"});
  CHECK(custom.exit_code == 2);

  auto orphan = run_cerulion({"pub", topic, "{}", "--once", "--encoding", "json", "--schema-name", "Imu"});
  CHECK(orphan.exit_code == 2);
  CHECK(orphan.err == "cerulion: --schema-name requires --schema-file (see 'cerulion pub --help')\n");

  const SchemaFiles files;
  const auto schema = files.write("Pose.msg", "float64 x\n");
  auto cdr = run_cerulion({"pub", topic, "x", "--once", "--encoding", "cdr", "--schema-file", schema});
  CHECK(cdr.exit_code == 2);
  CHECK(cdr.err == "cerulion: give --schema-encoding for a schema of message encoding 'cdr' (one of ros2msg, "
                   "ros2idl, omgidl) (see 'cerulion pub --help')\n");

  auto missing = run_cerulion({"pub", topic, "{}", "--once", "--encoding", "json", "--schema-file",
                               "/nonexistent/Imu.json"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "cerulion: cannot read '/nonexistent/Imu.json': No such file or directory\n");

  const auto broken = files.write("Broken.json", "{\"type\": ");
  auto unparsable = run_cerulion({"pub", topic, "{}", "--once", "--encoding", "json", "--schema-file", broken});
  CHECK(unparsable.exit_code == 1);
  REQUIRE(text_lines(unparsable.err).size() == 1);
  CHECK(unparsable.err.find("cerulion: schema file '" + broken + "': JSON Schema 'Broken' does not parse: ") == 0);

  auto bad_argument = run_cerulion({"pub", topic, "{}", "{nope", "--once", "--encoding", "json"});
  CHECK(bad_argument.exit_code == 1);
  CHECK(bad_argument.err.find("cerulion: argument 2: not JSON: ") == 0);
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("echo prints a JSON topic's message that does not parse as text, saying why", "[cli][echo][encoding]") {
  const std::string topic = unique_topic("echo_not_json");
  cerulion::PublisherOptions options;
  options.topic.type = cerulion::TopicType{"json", {}};
  auto publisher = cerulion::Publisher::create(topic, options);
  REQUIRE(publisher.ok());
  BackgroundProcess as_json({cerulion_binary(), "echo", topic, "--json", "-n", "2"});
  BackgroundProcess as_text({cerulion_binary(), "echo", topic, "-n", "2"});
  REQUIRE(publisher->wait_for_subscribers(2, std::chrono::seconds(20)).ok());
  for (std::string message : {"not json", "{\"a\": 1}"}) {
    REQUIRE(publisher->publish_copy(std::as_bytes(std::span(message.data(), message.size()))).ok());
  }
  auto json_out = as_json.wait();
  REQUIRE(json_out.exit_code == 0);
  auto lines = json_lines(json_out.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["data"] == "not json");
  CHECK(lines[0]["json_error"].get<std::string>().find("not JSON: parse error") == 0);
  CHECK(lines[1]["data"] == json{{"a", 1}});
  auto text_out = as_text.wait();
  REQUIRE(text_out.exit_code == 0);
  CHECK(text_lines(text_out.out) == std::vector<std::string>{"not json", R"({"a":1})"});
}

TEST_CASE("The checked-in imu.desc is the descriptor set the tests build by hand", "[cli][encoding][protobuf]") {
  std::ifstream in(kImuDesc, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes == pb::imu_descriptor_set());
}

TEST_CASE("pub names a protobuf schema after the one message type its descriptor set defines, as Foxglove needs",
          "[cli][pub][encoding][protobuf]") {
  const std::string topic = unique_topic("protobuf_name");
  BackgroundProcess holder({cerulion_binary(), "pub", topic, "x", "--encoding", "protobuf", "--schema-file", kImuDesc,
                            "--wait-subscribers", "5", "--timeout", "60"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  CHECK(topic_snapshot(topic)["schema"] == json{{"name", "fb.Imu"}, {"encoding", "protobuf"}, {"bytes", 46}});
  holder.signal(SIGINT);
  holder.wait();

  // A name the set defines is taken as given, a nested one too.
  const std::string nested = unique_topic("protobuf_nested");
  auto given = run_cerulion({"pub", nested, "x", "--once", "--encoding", "protobuf", "--schema-file", kImuDesc,
                             "--schema-name", "fb.Imu.Covariance"});
  CHECK(given.exit_code == 0);
  CHECK(given.err.empty());
}

TEST_CASE("pub refuses a protobuf schema name the descriptor set does not decide, listing its message types",
          "[cli][pub][encoding][protobuf]") {
  const std::string topic = unique_topic("protobuf_refused");
  const SchemaFiles files;
  SECTION("a name that is not a message type of the set") {
    auto refused = run_cerulion({"pub", topic, "x", "--once", "--encoding", "protobuf", "--schema-file", kImuDesc,
                                 "--schema-name", "imu"});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err == "cerulion: --schema-name: schema file '" + kImuDesc +
                             "': 'imu' is not a message type of the set (it defines fb.Imu, fb.Imu.Covariance) "
                             "(see 'cerulion pub --help')\n");
  }
  SECTION("a set of two message types, the imports apart, and no name") {
    const auto two = files.write("sensors.desc", pb::set({
        pb::file("std/header.proto", "std", {pb::message_type("Header")}),
        pb::file("sensors.proto", "fb", {pb::message_type("Imu"), pb::message_type("Gps")}, {"std/header.proto"}),
    }));
    auto refused = run_cerulion({"pub", topic, "x", "--once", "--encoding", "protobuf", "--schema-file", two});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err == "cerulion: schema file '" + two + "' defines 2 message types, not one: fb.Imu, fb.Gps: "
                             "name one with --schema-name (see 'cerulion pub --help')\n");
  }
  SECTION("a file that is not a descriptor set") {
    const auto text = files.write("imu.desc", "not a descriptor set");
    auto refused = run_cerulion({"pub", topic, "x", "--once", "--encoding", "protobuf", "--schema-file", text});
    CHECK(refused.exit_code == 1);
    CHECK(refused.err == "cerulion: schema file '" + text +
                             "': not a protobuf FileDescriptorSet: wire type 6 at byte 0\n");
  }
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("pub names the schema of a descriptor set that protoc made with its imports", "[cli][pub][encoding][protobuf]") {
  std::string protoc;
  for (const char* dir : {"/usr/bin", "/usr/local/bin"}) {
    if (std::filesystem::exists(std::string(dir) + "/protoc")) protoc = std::string(dir) + "/protoc";
  }
  if (protoc.empty()) {
    WARN("protoc is not installed: skipped (the hand-built descriptor sets above cover the same)");
    return;
  }
  const SchemaFiles files;
  files.write("header.proto", "syntax = \"proto3\";\npackage std_x;\nmessage Header { uint64 stamp = 1; }\n");
  const auto proto = files.write("imu.proto",
                                 "syntax = \"proto3\";\npackage fb;\nimport \"header.proto\";\n"
                                 "message Imu { std_x.Header header = 1; double ax = 2; message Covariance {} }\n");
  const auto desc = (files.dir / "imu.desc").string();
  auto made = run_process({protoc, "--include_imports", "--descriptor_set_out=" + desc, "-I", files.dir.string(), proto});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string topic = unique_topic("protoc_name");
  BackgroundProcess holder({cerulion_binary(), "pub", topic, "x", "--encoding", "protobuf", "--schema-file", desc,
                            "--wait-subscribers", "5", "--timeout", "60"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  CHECK(topic_snapshot(topic)["schema"]["name"] == "fb.Imu");
  holder.signal(SIGINT);
  holder.wait();
}
