// SPDX-License-Identifier: Apache-2.0
// cerulion.Recording: an MCAP file read through recorder::Reader, its channels and its messages.
//
// Reader::read_messages calls back for each message; a Python `for` pulls. A thread of the
// iterator's own runs the read and hands each message over through a short queue, so a file of
// any size is read with a few messages in memory, and the waiting side releases the GIL and sees
// Ctrl-C as every other wait here does.

#include <pybind11/stl.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "binding.hpp"
#include "message_values.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::python {
namespace {

/// Messages (or their bytes) a reading thread may hand over before it waits for Python.
constexpr std::size_t kQueuedMessages = 64;
constexpr std::size_t kQueuedBytes = 64u << 20;

/// A channel as Python sees it: its schema in core's Schema (cerulion.Schema).
struct PyChannel {
  std::uint16_t id = 0;
  std::string topic;
  std::string encoding;
  std::optional<Schema> schema;
  std::map<std::string, std::string> metadata;
  /// Reads its messages' payloads as values (json(), decode()).
  std::shared_ptr<const MessageValues> values;
};

PyChannel channel_of(const recorder::Channel& channel, const recorder::Schema* schema) {
  // The encoding as the topic had it: '' for raw bytes, which a channel carries as
  // "x-cerulion-bytes" (the profile owns that mapping).
  PyChannel out{channel.id, channel.topic, recorder::profile::topic_type(channel, schema).message_encoding, std::nullopt,
                {channel.metadata.begin(), channel.metadata.end()}, nullptr};
  if (schema != nullptr && schema->id != 0) {
    out.schema = Schema{schema->name, schema->encoding,
                        std::string(reinterpret_cast<const char*>(schema->data.data()), schema->data.size())};
  }
  out.values = std::make_shared<const MessageValues>(
      recorder::profile::topic_type(channel, schema != nullptr && schema->id != 0 ? schema : nullptr));
  return out;
}


const recorder::Schema* schema_in(const recorder::FileSummary& summary, std::uint16_t id) {
  auto it = summary.schemas.find(id);
  return it == summary.schemas.end() ? nullptr : &it->second;
}

/// One message read, with its channel's description (shared by the channel's messages).
struct PyRecordedMessage {
  std::shared_ptr<const PyChannel> channel;
  std::uint32_t sequence = 0;
  std::uint64_t log_time_ns = 0;
  std::uint64_t publish_time_ns = 0;
  py::bytes data;
};

std::string message_name(const PyRecordedMessage& r) {
  return "message #" + std::to_string(r.sequence) + " of " + r.channel->topic;
}

/// What the reading thread and the iterating one share.
struct MessageQueue {
  struct Item {
    std::shared_ptr<const PyChannel> channel;
    recorder::Message message;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Item> items;
  std::size_t bytes = 0;
  bool done = false;  // the reading thread has nothing more to hand over
  bool stop = false;  // the iterator is gone or closed: the thread stops at the next message
  Status status;
  std::vector<std::string> problems;
};

/// An iteration over a recording's messages: the reading thread and its queue.
class PyMessageIterator {
 public:
  PyMessageIterator(std::string path, recorder::ReadMessagesOptions options) : queue_(std::make_shared<MessageQueue>()) {
    thread_ = std::thread([queue = queue_, path = std::move(path), options = std::move(options)] {
      read_into(*queue, path, options);
    });
  }
  ~PyMessageIterator() { close(); }
  PyMessageIterator(const PyMessageIterator&) = delete;
  PyMessageIterator& operator=(const PyMessageIterator&) = delete;

  PyRecordedMessage next() {
    if (closed_) throw py::stop_iteration();
    std::unique_lock lock(queue_->mutex, std::defer_lock);
    Status waited = wait_in_slices(Deadline(std::nullopt), [&](Timeout slice) {
      lock.lock();
      const bool ready = queue_->changed.wait_for(lock, *slice, [&] { return !queue_->items.empty() || queue_->done; });
      if (!ready) lock.unlock();
      return ready ? Status() : Status(ErrorCode::Timeout, "");
    });
    check(std::move(waited));
    if (queue_->items.empty()) {
      Status status = queue_->status;
      lock.unlock();
      check(std::move(status));
      throw py::stop_iteration();
    }
    MessageQueue::Item item = std::move(queue_->items.front());
    queue_->items.pop_front();
    queue_->bytes -= item.message.data.size();
    lock.unlock();
    queue_->changed.notify_all();
    const auto& data = item.message.data;
    return PyRecordedMessage{std::move(item.channel), item.message.sequence, item.message.log_time,
                             item.message.publish_time,
                             py::bytes(reinterpret_cast<const char*>(data.data()), data.size())};
  }

  /// Stops the reading thread and waits for it. Idempotent.
  void close() {
    if (closed_) return;
    closed_ = true;
    {
      std::lock_guard lock(queue_->mutex);
      queue_->stop = true;
      queue_->items.clear();
    }
    queue_->changed.notify_all();
    py::gil_scoped_release unlocked;
    thread_.join();
  }

  std::vector<std::string> problems() const {
    std::lock_guard lock(queue_->mutex);
    return queue_->problems;
  }

 private:
  static void read_into(MessageQueue& queue, const std::string& path, const recorder::ReadMessagesOptions& options) {
    Status status;
    std::vector<std::string> problems;
    try {
      auto reader = recorder::Reader::open(path);
      if (!reader.ok()) {
        status = reader.status();
      } else {
        std::map<std::uint16_t, std::shared_ptr<const PyChannel>> channels;
        status = reader->read_messages(options, [&](const recorder::MessageView& view) {
          auto& channel = channels[view.channel.id];
          if (!channel) channel = std::make_shared<const PyChannel>(channel_of(view.channel, view.schema));
          std::unique_lock lock(queue.mutex);
          queue.changed.wait(lock, [&] {
            return queue.stop || queue.items.empty() ||
                   (queue.items.size() < kQueuedMessages && queue.bytes + view.message.data.size() <= kQueuedBytes);
          });
          if (queue.stop) return false;
          queue.bytes += view.message.data.size();
          queue.items.push_back({channel, view.message});
          lock.unlock();
          queue.changed.notify_all();
          return true;
        });
        problems = reader->problems();
      }
    } catch (const std::exception& error) {
      status = Status(ErrorCode::SystemError, std::string("reading '") + path + "': " + error.what(), Subject::path(path));
    }
    {
      std::lock_guard lock(queue.mutex);
      queue.done = true;
      queue.status = std::move(status);
      queue.problems = std::move(problems);
    }
    queue.changed.notify_all();
  }

  std::shared_ptr<MessageQueue> queue_;
  std::thread thread_;
  bool closed_ = false;
};

/// A recording opened for reading: its summary now, its messages on demand.
class PyRecording {
 public:
  explicit PyRecording(std::string path) : path_(std::move(path)) {
    auto reader = [&] {
      py::gil_scoped_release unlocked;
      return recorder::Reader::open(path_);
    }();
    reader_.emplace(take(std::move(reader)));
    const recorder::FileSummary& summary = reader_->summary();
    for (const auto& [id, channel] : summary.channels) channels_.push_back(channel_of(channel, schema_in(summary, channel.schema_id)));
  }

  PyMessageIterator* messages(py::object topics, std::uint64_t start_ns, std::optional<std::uint64_t> end_ns,
                              const std::string& order) const {
    recorder::ReadMessagesOptions options;
    if (!topics.is_none()) {
      // Named as the commands take them ("imu" is "/imu"); a name no channel has is an error, as
      // `cerulion play --topics` says, rather than an iteration over nothing.
      if (py::isinstance<py::str>(topics)) topics = py::make_tuple(topics);
      std::vector<std::string> wanted;
      for (py::handle topic : topics) wanted.push_back(topic.cast<std::string>());
      auto matcher = recording::TopicMatcher::compile({.topics = wanted});
      if (!matcher) raise(Status(matcher.status()).about(Subject::option("topics")));
      for (const auto& topic : wanted) {
        auto one = recording::TopicMatcher::compile({.topics = {topic}});
        const bool found = std::any_of(channels_.begin(), channels_.end(), [&](const PyChannel& c) { return one->matches(c.topic); });
        if (!found) {
          std::string names;
          for (const auto& c : channels_) names += (names.empty() ? "" : ", ") + c.topic;
          raise(Status(ErrorCode::NotFound,
                       path_ + " has no topic '" + topic + "' (" + (names.empty() ? "it has none" : "its topics: " + names) + ")",
                       Subject::topic(topic)));
        }
      }
      options.channel_filter = [matcher = std::move(*matcher)](const recorder::Channel& c) { return matcher.matches(c.topic); };
    }
    options.start_time = start_ns;
    if (end_ns) options.end_time = *end_ns;
    if (order == "log_time") {
      options.order = recorder::ReadOrder::LogTime;
    } else if (order != "file") {
      raise(Status(ErrorCode::InvalidArgument, "order: '" + order + "' is not an order (file, log_time)", Subject::option("order")));
    }
    return new PyMessageIterator(path_, std::move(options));
  }

  const std::string& path() const { return path_; }
  const std::vector<PyChannel>& channels() const { return channels_; }
  const recorder::FileSummary& summary() const { return reader_->summary(); }
  const std::vector<std::string>& problems() const { return reader_->problems(); }

 private:
  std::string path_;
  std::optional<recorder::Reader> reader_;
  std::vector<PyChannel> channels_;
};

py::object schema_or_none(const std::optional<Schema>& schema) { return schema ? py::cast(*schema) : py::none(); }

}  // namespace

void register_recording_reader(py::module_& m) {
  py::class_<PyChannel>(m, "Channel", "A recording's channel: one topic with its message encoding and schema.")
      .def_readonly("id", &PyChannel::id)
      .def_readonly("topic", &PyChannel::topic)
      .def_readonly("encoding", &PyChannel::encoding, "MCAP message encoding ('json', 'cdr'...); '' for raw bytes.")
      .def_property_readonly("schema", [](const PyChannel& c) { return schema_or_none(c.schema); },
                             "A cerulion.Schema, or None.")
      .def_readonly("metadata", &PyChannel::metadata, "The channel's metadata (what cerulion record noted of the topic).")
      .def("__repr__", [](const PyChannel& c) { return "<cerulion.Channel " + std::to_string(c.id) + " '" + c.topic + "'>"; });

  py::class_<PyRecordedMessage>(m, "RecordedMessage", "One message of a recording (its payload copied into `data`).")
      .def_property_readonly("topic", [](const PyRecordedMessage& r) { return r.channel->topic; })
      .def_property_readonly("channel_id", [](const PyRecordedMessage& r) { return r.channel->id; })
      .def_property_readonly("encoding", [](const PyRecordedMessage& r) { return r.channel->encoding; })
      .def_property_readonly("schema", [](const PyRecordedMessage& r) { return schema_or_none(r.channel->schema); })
      .def_readonly("sequence", &PyRecordedMessage::sequence)
      .def_readonly("log_time_ns", &PyRecordedMessage::log_time_ns, "When it was recorded, ns since the Unix epoch.")
      .def_readonly("publish_time_ns", &PyRecordedMessage::publish_time_ns, "When it was published, ns since the Unix epoch.")
      .def_readonly("data", &PyRecordedMessage::data, "The payload (bytes).")
      .def("json", [](const PyRecordedMessage& r) {
             return r.channel->values->json(std::string_view(r.data), message_name(r));
           },
           "The payload as Python values: a json channel's parsed, a ROS 2 channel's fields (as decode()). "
           "Raises InvalidArgument naming the message when it is neither, or does not parse.")
      .def("decode", [](const PyRecordedMessage& r) {
             return r.channel->values->decode(std::string_view(r.data), message_name(r));
           },
           "A ROS 2 message's fields (cdr channel, ros2msg schema) as a dict in field order; byte arrays as bytes. "
           "A schema without its definition is looked up on $CERULION_MSG_PATH / $AMENT_PREFIX_PATH.")
      .def("__len__", [](const PyRecordedMessage& r) { return py::len(r.data); })
      .def("__repr__", [](const PyRecordedMessage& r) {
        return "<cerulion.RecordedMessage '" + r.channel->topic + "' #" + std::to_string(r.sequence) + ", " +
               std::to_string(py::len(r.data)) + " bytes>";
      });

  py::class_<PyMessageIterator>(m, "RecordedMessages", "An iteration over a recording's messages (Recording.messages()).")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &PyMessageIterator::next)
      .def("close", &PyMessageIterator::close, "Stops reading. Idempotent.")
      .def_property_readonly("problems", &PyMessageIterator::problems,
                             "What was found wrong while reading (bad chunks skipped...), one line each; complete at the end.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyMessageIterator& i, py::args) { i.close(); return false; });

  py::class_<PyRecording>(m, "Recording",
                          "An MCAP file opened for reading (cerulion::recorder::Reader): a recording of `cerulion "
                          "record`, a flashback dump, any MCAP file. A file whose summary is missing or damaged (a "
                          "recording killed midway) is scanned instead; chunks that fail their CRC are skipped and "
                          "named in `problems`.\n\n"
                          "    rec = cerulion.Recording('run.mcap')\n"
                          "    for m in rec.messages(topics=['/imu']):\n"
                          "        print(m.topic, m.log_time_ns, m.encoding, len(m.data))")
      .def(py::init<std::string>(), py::arg("path"), "Opens `path`. Raises NotFound, PermissionDenied, Corrupted (not MCAP).")
      .def("messages", &PyRecording::messages, py::kw_only(), py::arg("topics") = py::none(), py::arg("start_ns") = 0,
           py::arg("end_ns") = py::none(), py::arg("order") = "file", py::return_value_policy::take_ownership,
           "An iterator over the messages, read as it goes (a few in memory at a time). topics: a topic or a list "
           "of topics, named as the commands take them ('imu' is '/imu'; None: all); one the recording lacks raises "
           "NotFound naming its topics. start_ns, end_ns: an inclusive log-time range. order: 'file' (as they lie, the "
           "default) or 'log_time' (merged by log time, as players read). Waiting for the next one releases the GIL.")
      .def("__iter__", [](const PyRecording& r) { return r.messages(py::none(), 0, std::nullopt, "file"); },
           py::return_value_policy::take_ownership)
      .def_property_readonly("path", &PyRecording::path)
      .def_property_readonly("channels", &PyRecording::channels, "The channels (cerulion.Channel), by id.")
      .def_property_readonly("topics", [](const PyRecording& r) {
        std::vector<std::string> topics;
        for (const auto& c : r.channels()) topics.push_back(c.topic);
        return topics;
      }, "The topics of its channels.")
      .def_property_readonly("message_count", [](const PyRecording& r) { return r.summary().statistics.message_count; })
      .def_property_readonly("start_ns", [](const PyRecording& r) { return r.summary().statistics.message_start_time; },
                             "Log time of the earliest message, ns since the Unix epoch.")
      .def_property_readonly("end_ns", [](const PyRecording& r) { return r.summary().statistics.message_end_time; },
                             "Log time of the latest message.")
      .def_property_readonly("library", [](const PyRecording& r) { return r.summary().header.library; },
                             "What wrote it ('cerulion <version>'...).")
      .def_property_readonly("profile", [](const PyRecording& r) { return r.summary().header.profile; })
      .def_property_readonly("finalized", [](const PyRecording& r) { return r.summary().finalized; },
                             "False for a file whose writer did not finish it (killed): read by a scan.")
      .def_property_readonly("problems", &PyRecording::problems, "What was found wrong opening it, one line each.")
      .def("__repr__", [](const PyRecording& r) {
        return "<cerulion.Recording '" + r.path() + "', " + std::to_string(r.channels().size()) + " channel(s)>";
      });
}

}  // namespace cerulion::python
