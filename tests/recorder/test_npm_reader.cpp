// SPDX-License-Identifier: Apache-2.0
// Files this writer makes are read back by an independent implementation: the npm package
// @mcap/core's indexed reader (pinned in tests/recorder/npm/package.json). Skips, with a clear
// message, when npm cannot install it (no network, no registry).

#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>

#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"
#include "npm_packages.hpp"

using namespace rectest;

namespace {

std::uint32_t fnv1a(const ByteVector& bytes) {
  std::uint32_t h = 0x811c9dc5u;
  for (auto b : bytes) {
    h ^= static_cast<std::uint8_t>(b);
    h *= 0x01000193u;
  }
  return h;
}

// Installs the pinned packages into the build tree once; false when npm cannot.
bool npm_ready(fs::path& dir) {
  dir = fs::path(CERULION_TEST_BINARY_DIR) / "npm";
  return cerulion::test::npm_install(CERULION_NPM_TEST_DIR, dir, {"package.json", "read_indexed.mjs"},
                                     {"@mcap/core", "fzstd"});
}

}  // namespace

TEST_CASE("Files the writer makes are read back by @mcap/core's indexed reader", "[recorder][npm]") {
  fs::path dir;
  if (!cerulion::test::node_and_npm()) {
    WARN("skipped: node/npm not installed");
    return;
  }
  if (!npm_ready(dir)) {
    WARN("skipped: npm registry unreachable (could not install @mcap/core; see " << (dir / "npm-install.log").string() << ")");
    return;
  }
  for (auto compression : {Compression::Zstd, Compression::None}) {
    INFO(to_string(compression));
    auto path = temp_path(std::string("npm-") + to_string(compression) + ".mcap");
    WriterOptions o;
    o.compression = compression;
    o.chunk_size = 32 * 1024;
    auto w = Writer::create(path, o);
    REQUIRE(w.ok());
    auto s = w->add_schema("Blob", "jsonschema", bytes_of("{\"type\":\"object\"}"));
    REQUIRE(s.ok());
    auto a = w->add_channel("/a", "json", *s, {{"mode", "lockstep"}});
    auto b = w->add_channel("/b", "x-cerulion-bytes");
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    std::mt19937 rng(7);
    nlohmann::json expected = nlohmann::json::array();
    for (std::uint32_t i = 0; i < 2000; ++i) {
      ByteVector data(rng() % 600);
      for (auto& x : data) x = static_cast<std::byte>(i % 3 ? rng() % 4 : rng());
      std::uint16_t ch = i % 4 ? *a : *b;
      std::uint64_t t = 1'700'000'000'000'000'000ull + i * 1'000'000ull;
      REQUIRE(w->write(ch, i, t, t, data).ok());
      expected.push_back({ch == *a ? "/a" : "/b", i, std::to_string(t), data.size(), fnv1a(data)});
    }
    REQUIRE(w->write_metadata({"cerulion.recording", {{"host", "h"}}}).ok());
    REQUIRE(w->write_attachment({1, 2, "notes.txt", "text/plain", bytes_of("hi"), 0}).ok());
    REQUIRE(w->close().ok());

    auto out = temp_path("npm-out.json");
    std::string cmd = "cd '" + dir.string() + "' && timeout 120 node read_indexed.mjs '" + path + "' > '" + out + "' 2>&1";
    int rc = std::system(cmd.c_str());
    INFO(read_all(out));
    REQUIRE(rc == 0);
    auto got = nlohmann::json::parse(read_all(out));
    CHECK(got["message_count"] == 2000);
    CHECK(got["stream_done"] == true);
    CHECK(got["streamed_messages"] == 2000);
    CHECK(got["chunk_count"].get<int>() > 1);
    CHECK(got["messages"] == expected);
    REQUIRE(got["metadata"].size() == 1);
    CHECK(got["metadata"][0]["metadata"]["host"] == "h");
    REQUIRE(got["attachments"].size() == 1);
    CHECK(got["attachments"][0]["size"] == 2);
  }
}
