// SPDX-License-Identifier: Apache-2.0
// cerulion.RecordingWriter (an MCAP file written through recorder::Writer) and
// cerulion.flashback_dump (a flashback store dumped through flashback::dump_to_file, as
// `cerulion flashback dump` dumps it).

#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <tuple>

#include "arguments.hpp"
#include "binding.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/recorder/writer.hpp"

namespace cerulion::python {
namespace {

std::uint64_t realtime_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

recorder::Compression compression_argument(const std::string& name) {
  if (name == "zstd") return recorder::Compression::Zstd;
  if (name == "none") return recorder::Compression::None;
  raise(Status(ErrorCode::InvalidArgument, "compression: '" + name + "' is not a compression (zstd, none)",
               Subject::option("compression")));
}

/// A recording being written. Schemas are written once each, however many channels share one.
class PyRecordingWriter {
 public:
  PyRecordingWriter(const std::string& path, const std::string& compression, std::uint64_t chunk_size, bool overwrite,
                    const std::string& profile) {
    recorder::WriterOptions options;
    options.compression = compression_argument(compression);
    if (chunk_size == 0) raise(Status(ErrorCode::InvalidArgument, "chunk_size: expected bytes > 0", Subject::option("chunk_size")));
    options.chunk_size = chunk_size;
    options.overwrite = overwrite;
    options.profile = profile;
    auto writer = [&] {
      py::gil_scoped_release unlocked;
      return recorder::Writer::create(path, std::move(options));
    }();
    writer_.emplace(take(std::move(writer)));
  }

  std::uint16_t add_channel(const std::string& topic, py::object encoding, py::object schema,
                            const std::map<std::string, std::string>& metadata) {
    recorder::Writer& writer = open("add_channel()");
    const std::optional<TopicType> type = type_argument(encoding, schema);
    std::uint16_t schema_id = 0;
    if (type && !type->schema.empty()) {
      const Schema& s = type->schema;
      auto [it, added] = schemas_.try_emplace(std::make_tuple(s.name, s.encoding, s.data), 0);
      if (added) {
        it->second = take(writer.add_schema(s.name, s.encoding, std::as_bytes(std::span(s.data.data(), s.data.size()))));
      }
      schema_id = it->second;
    }
    // As every cerulion recording carries a type (raw bytes as "x-cerulion-bytes"): the profile's mapping.
    const std::string message_encoding = recorder::profile::channel_type(type.value_or(TopicType{})).message_encoding;
    const std::uint16_t id = take(writer.add_channel(topic, message_encoding, schema_id, {metadata.begin(), metadata.end()}));
    next_sequence_[id] = 0;
    return id;
  }

  void write(std::uint16_t channel, py::handle data, std::optional<std::uint64_t> log_time_ns,
             std::optional<std::uint64_t> publish_time_ns, std::optional<std::uint32_t> sequence) {
    recorder::Writer& writer = open("write()");
    auto next = next_sequence_.find(channel);
    if (next == next_sequence_.end()) {
      raise(Status(ErrorCode::InvalidArgument, "write(): channel " + std::to_string(channel) + " was not added",
                   Subject::option("channel")));
    }
    const ContiguousBuffer buffer(data, "write()");
    const std::uint64_t log_time = log_time_ns.value_or(realtime_now_ns());
    const std::uint32_t seq = sequence.value_or(next->second);
    next->second = seq + 1;
    Status written = [&] {
      py::gil_scoped_release unlocked;  // compressing a chunk takes a while
      return writer.write(channel, seq, log_time, publish_time_ns.value_or(log_time),
                          std::span(static_cast<const std::byte*>(buffer.data()), buffer.size()));
    }();
    check(std::move(written));
  }

  /// Finishes the file (summary, footer). Idempotent.
  void close() {
    if (!writer_) return;
    Status closed = [&] {
      py::gil_scoped_release unlocked;
      return writer_->close();
    }();
    counters_ = writer_->counters();
    path_ = writer_->path();
    writer_.reset();
    check(std::move(closed));
  }

  const recorder::WriterCounters& counters() const { return writer_ ? writer_->counters() : counters_; }
  std::string path() const { return writer_ ? writer_->path() : path_; }
  bool closed() const { return !writer_; }

 private:
  recorder::Writer& open(const char* use) {
    if (!writer_) raise_closed(std::string("the recording was closed; ") + use + " needs an open one", Subject::path(path_));
    return *writer_;
  }

  std::optional<recorder::Writer> writer_;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint16_t> schemas_;
  std::map<std::uint16_t, std::uint32_t> next_sequence_;
  recorder::WriterCounters counters_;
  std::string path_;
};

/// Dumps the store of keeper `name` in `domain` into `path` (a directory: a file named as the
/// keeper names its own dumps, in it; None: the keeper's own dump directory, else the current one,
/// as `cerulion flashback dump` does).
flashback::DumpSummary flashback_dump(py::object path_object, const std::string& name, py::object domain_object,
                                      double last_s, const std::string& note, bool from_topics) {
  const std::string path = path_object.is_none() ? std::string() : py::str(path_object).cast<std::string>();
  const std::string domain = domain_argument(domain_object);
  flashback::DumpOptions options;
  if (!(last_s >= 0)) raise(Status(ErrorCode::InvalidArgument, "last: expected seconds ≥ 0", Subject::option("last")));
  options.last_s = last_s;
  options.note = note;
  options.details = "cerulion.flashback_dump (Python)";
  options.from_topics = from_topics;
  Result<flashback::DumpSummary> dumped = [&]() -> Result<flashback::DumpSummary> {
    py::gil_scoped_release unlocked;
    auto store = flashback::Store::open(domain, name);
    if (!store.ok()) return store.status();
    std::string file = path;
    if (file.empty()) file = store->status().keeper.dump_dir;
    if (file.empty()) file = ".";
    std::error_code error;
    if (std::filesystem::is_directory(file, error)) {
      file = (std::filesystem::path(file) / flashback::default_dump_file_name(domain, name, realtime_now_ns())).string();
    }
    return flashback::dump_to_file(*store, file, options);
  }();
  return take(std::move(dumped));
}

}  // namespace

void register_recording_writer(py::module_& m) {
  py::class_<recorder::WriterCounters>(m, "WriterCounters", "What a RecordingWriter has written so far.")
      .def_readonly("messages", &recorder::WriterCounters::messages)
      .def_readonly("message_bytes", &recorder::WriterCounters::message_bytes, "Payload bytes.")
      .def_readonly("file_bytes", &recorder::WriterCounters::file_bytes)
      .def_readonly("chunks", &recorder::WriterCounters::chunks);

  py::class_<PyRecordingWriter>(m, "RecordingWriter",
                                "An MCAP file being written (cerulion::recorder::Writer), as cerulion record writes: "
                                "chunked, indexed, zstd by default, readable by Foxglove and the mcap CLI.\n\n"
                                "    with cerulion.RecordingWriter('out.mcap') as w:\n"
                                "        imu = w.add_channel('/imu', encoding='json', schema=('Imu', 'jsonschema', '{}'))\n"
                                "        w.write(imu, b'{\"yaw\": 0.5}')\n\n"
                                "A context manager: the file is finished (summary, footer) at the end, exception or not.")
      .def(py::init<const std::string&, const std::string&, std::uint64_t, bool, const std::string&>(), py::arg("path"),
           py::kw_only(), py::arg("compression") = "zstd", py::arg("chunk_size") = 1u << 20, py::arg("overwrite") = false,
           py::arg("profile") = "",
           "Creates `path` (InvalidArgument when it exists, unless overwrite). compression: 'zstd' or 'none'. "
           "chunk_size: uncompressed bytes per chunk. profile: the MCAP profile ('' or 'ros2').")
      .def("add_channel", &PyRecordingWriter::add_channel, py::arg("topic"), py::kw_only(), py::arg("encoding") = py::none(),
           py::arg("schema") = py::none(), py::arg("metadata") = std::map<std::string, std::string>{},
           "Adds a channel; returns its id for write(). encoding: MCAP message encoding ('json', 'protobuf', 'cdr'...; "
           "None: raw bytes). schema: cerulion.Schema or (name, encoding, data), written once however many "
           "channels share it.")
      .def("write", &PyRecordingWriter::write, py::arg("channel"), py::arg("data"), py::kw_only(),
           py::arg("log_time_ns") = py::none(), py::arg("publish_time_ns") = py::none(), py::arg("sequence") = py::none(),
           "Writes one message (any C-contiguous buffer) on a channel. log_time_ns: now (realtime) by default; "
           "publish_time_ns: the log time; sequence: the channel's next (0, 1, ...).")
      .def("close", &PyRecordingWriter::close, "Finishes the file. Idempotent.")
      .def_property_readonly("counters", &PyRecordingWriter::counters)
      .def_property_readonly("path", &PyRecordingWriter::path)
      .def_property_readonly("closed", &PyRecordingWriter::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyRecordingWriter& w, py::args) { w.close(); return false; });

  py::class_<recorder::profile::TopicCount>(m, "DumpedTopic", "A topic of a flashback dump: messages kept and lost.")
      .def_readonly("topic", &recorder::profile::TopicCount::topic)
      .def_readonly("messages", &recorder::profile::TopicCount::messages)
      .def_readonly("lost", &recorder::profile::TopicCount::lost);

  py::class_<flashback::DumpSummary>(m, "DumpSummary", "What flashback_dump() wrote.")
      .def_readonly("path", &flashback::DumpSummary::path)
      .def_readonly("messages", &flashback::DumpSummary::messages)
      .def_readonly("chunks", &flashback::DumpSummary::chunks)
      .def_readonly("file_bytes", &flashback::DumpSummary::file_bytes)
      .def_readonly("window_start_ns", &flashback::DumpSummary::window_start_ns)
      .def_readonly("window_end_ns", &flashback::DumpSummary::window_end_ns)
      .def_readonly("chunks_left_out", &flashback::DumpSummary::chunks_left_out,
                    "Chunks evicted while copied, or damaged: left out whole.")
      .def_readonly("from_topics", &flashback::DumpSummary::from_topics,
                    "Messages taken from the topics' rings (the store did not hold them yet).")
      .def_readonly("skipped", &flashback::DumpSummary::skipped, "What a damaged store made it leave out, one line each.")
      .def_readonly("topics", &flashback::DumpSummary::topics, "Per topic (DumpedTopic).");

  m.def("flashback_dump", &flashback_dump, py::arg("path") = py::none(), py::kw_only(), py::arg("name") = "default",
        py::arg("domain") = py::none(), py::arg("last") = 0.0, py::arg("note") = "", py::arg("from_topics") = true,
        "Dumps what the flashback store of keeper `name` holds into an MCAP file, as `cerulion flashback dump` does "
        "(flashback::dump_to_file): while its keeper runs, after it was killed, after the publishers died. path: "
        "the file (never replaced), or a directory for a file named as the keeper names its dumps (None, the "
        "default: the keeper's own dump directory, as `cerulion flashback dump`; the current one when it has none). last: only the last this many seconds (0: all held). note: said in the dump's metadata. "
        "from_topics: also take from the kept topics' rings what the store does not hold yet. Returns a "
        "DumpSummary. Raises NotFound (no such store), InvalidArgument (the file exists)... The GIL is released "
        "while it dumps.");
}

}  // namespace cerulion::python
