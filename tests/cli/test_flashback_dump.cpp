// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback dump` end to end: usage errors, dumps of what killed publishers and a killed
// keeper left in the store, read back byte by byte, by `cerulion info` and by the independent
// @mcap/core reader, where dumps go, and a dump that cannot be written.

#include <catch2/catch.hpp>

#include <csignal>
#include <random>
#include <tuple>

#include "flashback_helpers.hpp"
#include "official_mcap_reader.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("flashback usage errors exit 2 with one line and a dump without a store names the keeper",
          "[cli][flashback]") {
  FlashbackDomain d("fb_usage");
  const std::vector<std::vector<std::string>> usage = {
      {"flashback"},
      {"flashback", "start"},
      {"flashback", "start", "/t", "--name", "a/b"},
      {"flashback", "start", "/t", "--window", "0"},
      {"flashback", "start", "/t", "--window", "5x"},
      {"flashback", "start", "/t", "--post", "-1s"},
      {"flashback", "start", "-e", "(["},
      {"flashback", "start", "-a", "-x", "*bad"},
      {"flashback", "dump", "--last", "-1"},
      {"flashback", "status", "--name", ""},
  };
  for (const auto& args : usage) {
    auto r = d.run(args);
    std::string line;
    for (const auto& a : args) line += " " + a;
    INFO("cerulion" << line);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.out.empty());
  }
  // No keeper ever ran in the domain: nothing was created by the refusals above.
  CHECK(count_shm_entries("cerulion-flashback." + d.name + ".") == 0);

  auto r = d.run({"flashback", "dump"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(r.err.find("'default'") != std::string::npos);
  CHECK(r.err.find(d.name) != std::string::npos);
  r = d.run({"flashback", "dump", "--name", "nobody_here", "-o", d.path("never.mcap")});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("'nobody_here'") != std::string::npos);
  CHECK_FALSE(fs::exists(d.path("never.mcap")));
  CHECK(d.dumps().empty());
  for (const char* sub : {"status", "stop"}) {
    r = d.run({"flashback", sub, "--name", "nobody_here"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("'nobody_here'") != std::string::npos);
  }
  // For a program, nothing there is still an object (every figure null, no topics), and a failure.
  r = d.run({"flashback", "status", "--json", "--name", "nobody_here"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  REQUIRE(one_line(r.out));
  auto nothing = json::parse(r.out);
  CHECK(nothing["name"] == "nobody_here");
  CHECK(nothing["domain"] == d.name);
  CHECK(nothing["alive"] == false);
  for (const char* key : {"store", "keeper_pid", "uptime_s", "dump_dir", "triggers", "window_s", "memory_bytes",
                          "messages", "dumps", "last_dump"}) {
    INFO(key);
    REQUIRE(nothing.contains(key));
    CHECK(nothing[key].is_null());
  }
  CHECK(nothing["topics"] == json::array());
}

TEST_CASE("A flashback dump holds every message a killed publisher sent in order and byte-exact",
          "[cli][flashback]") {
  FlashbackDomain d("fb_exact");
  const std::string topic = "/exact";
  // Lockstep: the publisher waits for the keeper, so "every message" is a guarantee, not luck.
  auto keeper = d.start_keeper({topic, "--lockstep"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic, d.name), "subscriber") == 1; }));

  // Lines of different lengths and contents, published from stdin at 1 kHz, killed part way.
  std::vector<std::string> lines;
  std::string input;
  for (int i = 0; i < 5000; ++i) {
    std::string line = "message " + std::to_string(i) + " " + std::string((i * 37) % 300, static_cast<char>('a' + i % 26));
    input += line + "\n";
    lines.push_back(std::move(line));
  }
  // stdin from a file of our own through sh: BackgroundProcess unlinks its input file right after
  // fork, possibly before the child opened it.
  const std::string input_file = d.path("lines.txt");
  spit(input_file, input);
  auto pub_command = d.command({"pub", topic, "-r", "1000"});
  pub_command.insert(pub_command.begin(), {"/bin/sh", "-c", "exec \"$0\" \"$@\" < '" + input_file + "'"});
  BackgroundProcess pub(pub_command);
  REQUIRE(eventually([&] { return published(topic, d.name) >= 300; }));
  pub.signal(SIGKILL);
  REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
  const std::uint64_t sent = published(topic, d.name);
  REQUIRE(sent >= 300);
  REQUIRE(sent < lines.size());
  REQUIRE(eventually([&] { return d.kept(topic) == sent; }));

  auto check_dump = [&](const std::string& file) {
    auto r = d.run({"flashback", "dump", "-o", file});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == file + "\n");
    auto messages = dumped_messages(file);
    REQUIRE(messages.size() == sent);
    for (std::size_t i = 0; i < messages.size(); ++i) {
      INFO("message " << i);
      REQUIRE(messages[i].topic == topic);
      REQUIRE(messages[i].sequence == i);
      REQUIRE(messages[i].data == lines[i]);
      if (i > 0) REQUIRE(messages[i].log_time >= messages[i - 1].log_time);
    }
    auto info = info_json(file);
    CHECK(info["finalized"] == true);
    CHECK(info["problems"].empty());
    auto md = flashback_metadata(info);
    REQUIRE(md.is_object());
    CHECK(md["trigger"] == "request");
    CHECK(md["messages:" + topic] == std::to_string(sent));
    CHECK(md["lost:" + topic] == "0");
  };
  check_dump(d.path("while-running.mcap"));
  // Publisher and keeper gone: the store still has all of it.
  keeper->signal(SIGKILL);
  keeper->wait();
  check_dump(d.path("after-keeper-killed.mcap"));
}

TEST_CASE("A flashback keeper killed with SIGKILL at random moments leaves a store that dumps whole and a new keeper keeps its history",
          "[cli][flashback]") {
  FlashbackDomain d("fb_killkeeper");
  const std::string topic = "/busy";
  constexpr std::size_t kSize = 300;
  BackgroundProcess pub(d.command({"pub", topic, "--size", std::to_string(kSize), "--fill", "counter", "-r", "2000"}));
  std::mt19937 rng(Catch::rngSeed());
  std::uint32_t first_sequence = 0;
  std::size_t previous_count = 0;
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    auto keeper = d.start_keeper({topic, "--window", "60"});
    REQUIRE(tap_attached(topic, d.name));
    // Killed once it has taken something of its own (a starved keeper may not have yet), at a
    // random moment after that.
    REQUIRE(eventually([&] { return d.kept(topic) > previous_count; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 700));
    keeper->signal(SIGKILL);
    REQUIRE(keeper->wait().exit_code == 128 + SIGKILL);
    CHECK(d.status()["alive"] == false);

    const std::string file = d.path("round" + std::to_string(round) + ".mcap");
    auto r = d.run({"flashback", "dump", "-o", file});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto info = info_json(file);
    CHECK(info["finalized"] == true);
    CHECK(info["problems"].empty());
    auto messages = dumped_messages(file);
    REQUIRE(!messages.empty());
    CHECK(info["message_count"] == messages.size());
    for (std::size_t i = 0; i < messages.size(); ++i) {
      INFO("message " << i << " sequence " << messages[i].sequence);
      REQUIRE(messages[i].data == counter_payload(messages[i].sequence, kSize));  // nothing torn
      if (i > 0) REQUIRE(messages[i].sequence > messages[i - 1].sequence);     // in order, no duplicates
    }
    // Each keeper took the store over: the first round's messages are all still there.
    if (round == 0) first_sequence = messages.front().sequence;
    CHECK(messages.front().sequence == first_sequence);
    CHECK(messages.size() > previous_count);
    previous_count = messages.size();
  }
}

TEST_CASE("flashback dump without -o writes into the running keeper's directory, named after the keeper",
          "[cli][flashback]") {
  FlashbackDomain d("fb_dumpdir");
  auto keeper = d.start_keeper({"/dirs"}, "cams");
  REQUIRE(tap_attached("/dirs", d.name));
  REQUIRE(d.run({"pub", "/dirs", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/dirs", "cams") == 5; }));
  // Asked from elsewhere (this process's directory is not the keeper's), without -o or --dir.
  REQUIRE(fs::current_path() != fs::path(d.dir));
  auto r = d.run({"flashback", "dump", "--name", "cams"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(d.dumps().size() == 1);
  CHECK(r.out == d.dumps()[0] + "\n");
  const std::string file = fs::path(d.dumps()[0]).filename().string();
  CHECK(file.rfind("flashback-" + d.name + "-cams-", 0) == 0);
  CHECK(topic_count(info_json(d.dumps()[0]), "/dirs") == 5);
  // --dir still says otherwise.
  const std::string other = d.path("other");
  fs::create_directories(other);
  r = d.run({"flashback", "dump", "--name", "cams", "--dir", other});
  REQUIRE(r.exit_code == 0);
  CHECK(fs::path(r.out.substr(0, r.out.size() - 1)).parent_path() == fs::path(other));
}

TEST_CASE("A topic gone before the window is left out of a later flashback dump, and the window takes units",
          "[cli][flashback]") {
  FlashbackDomain d("fb_gone");
  auto keeper = d.start_keeper({"-a", "--window", "1s"});
  CHECK(d.status()["window_limit_s"] == 1);
  REQUIRE(d.run({"pub", "/old", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/old") == 5; }));
  // Out of the window: the store holds nothing of it any more.
  REQUIRE(eventually([&] { return d.status().value("messages", 1) == 0; }));
  // A topic that goes on, so that it is in the window whenever the dump is taken.
  BackgroundProcess pub(d.command({"pub", "/new", "y", "-r", kTapSafeRate}));
  REQUIRE(eventually([&] { return d.kept("/new") >= 5; }));
  const std::string file = d.path("later.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file}).exit_code == 0);
  auto info = info_json(file);
  REQUIRE(info["channels"].size() == 1);
  CHECK(info["channels"][0]["topic"] == "/new");
  auto md = flashback_metadata(info);
  CHECK_FALSE(md.contains("messages:/old"));
}

TEST_CASE("A flashback dump that holds no message is still written, with a warning saying why", "[cli][flashback]") {
  FlashbackDomain d("fb_empty");
  auto keeper = d.start_keeper({"-a", "--window", "1s"});
  auto r = d.run({"flashback", "dump", "-o", d.path("nothing.mcap")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(info_json(d.path("nothing.mcap"))["message_count"] == 0);
  CHECK(r.err.find("warning: the dump holds no message: its keeper has kept no topic (none in domain '" + d.name) !=
        std::string::npos);

  REQUIRE(d.run({"pub", "/old", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/old") == 5; }));
  REQUIRE(eventually([&] { return d.status().value("messages", 1) == 0; }));  // out of the 1 s window
  r = d.run({"flashback", "dump", "-o", d.path("quiet.mcap")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: the dump holds no message: its keeper keeps 1 topic but none sent anything within the window") !=
        std::string::npos);
  // A dump with messages in it has no such warning.
  REQUIRE(d.run({"pub", "/old", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/old") >= 1; }));
  r = d.run({"flashback", "dump", "-o", d.path("some.mcap")});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
}

TEST_CASE("flashback dump to a path that cannot be written fails with one line and leaves nothing",
          "[cli][flashback]") {
  FlashbackDomain d("fb_badpath");
  auto keeper = d.start_keeper({"/p"});
  REQUIRE(tap_attached("/p", d.name));
  REQUIRE(d.run({"pub", "/p", "x", "-n", "5", "-r", "100"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/p") == 5; }));  // the keeper reads behind the publisher
  const std::string missing_dir = d.path("no/such/dir");
  auto r = d.run({"flashback", "dump", "-o", missing_dir + "/out.mcap"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(d.path("no")));

  const std::string existing = d.path("precious.mcap");
  spit(existing, "precious");
  r = d.run({"flashback", "dump", "-o", existing});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(slurp(existing) == "precious");
  // Nothing else appeared, and the store is untouched: the dump can be retried.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.dir)) ++entries;
  CHECK(entries == 1);
  CHECK(d.status()["dumps"] == 0);
  auto retry = d.path("retry.mcap");
  CHECK(d.run({"flashback", "dump", "-o", retry}).exit_code == 0);
  CHECK(topic_count(info_json(retry), "/p") == 5);
}

TEST_CASE("A flashback dump is read back by the indexed and streaming readers of mcap core", "[cli][flashback][npm]") {
  std::string why;
  const auto reader = cerulion::test::official_mcap_reader(why);
  if (!reader) {
    WARN("skipped: " << why);
    return;
  }
  FlashbackDomain d("fb_npm");
  auto keeper = d.start_keeper({"-a"});
  // Two topics, part of it in closed (compressed) chunks and part in the open chunk.
  BackgroundProcess a(d.command({"pub", "/npm/a", "--size", "2000", "--fill", "counter", "-n", "150", "-r", kTapSafeRate}));
  BackgroundProcess b(d.command({"pub", "/npm/b", "--size", "100", "--fill", "random", "-n", "150", "-r", kTapSafeRate}));
  REQUIRE(a.wait(20s).exit_code == 0);
  REQUIRE(b.wait(20s).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/npm/a") + d.kept("/npm/b") >= 295; }));
  const std::string file = d.path("npm.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file, "--note", "for node"}).exit_code == 0);
  auto ours = dumped_messages(file);
  REQUIRE(ours.size() >= 295);

  const auto read_back = cerulion::test::read_with_official_reader(*reader, {file});
  INFO(read_back.output);
  REQUIRE(read_back.exit_code == 0);
  REQUIRE(read_back.files.size() == 1);
  const auto& got = read_back.files[0];
  CHECK(got["stream_done"] == true);
  CHECK(got["message_count"] == ours.size());
  CHECK(got["streamed_messages"] == ours.size());
  CHECK(got["chunk_count"].get<int>() >= 2);
  // The same messages: topic, sequence, log time and size, one for one (ties in log time may come
  // in either order, so both sides are compared sorted).
  using Row = std::tuple<std::string, std::uint64_t, std::string, std::size_t>;
  std::vector<Row> expected, read;
  for (const auto& m : ours) expected.emplace_back(m.topic, m.sequence, std::to_string(m.log_time), m.data.size());
  for (const auto& m : got["messages"]) read.emplace_back(m[0], m[1], m[2], m[3]);
  std::sort(expected.begin(), expected.end());
  std::sort(read.begin(), read.end());
  CHECK(read == expected);
  json flashback;
  for (const auto& m : got["metadata"]) {
    if (m["name"] == "flashback") flashback = m["metadata"];
  }
  REQUIRE(flashback.is_object());
  CHECK(flashback["note"] == "for node");
}
