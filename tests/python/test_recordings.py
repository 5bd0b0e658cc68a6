# SPDX-License-Identifier: Apache-2.0
"""Recordings from Python: MCAP files written and read through the recorder library, and
flashback dumps triggered through the flashback library."""

import json
import subprocess

import numpy as np
import pytest

import cerulion

SCHEMA = cerulion.Schema("Battery", "jsonschema", '{"type": "object"}')


def write_two_topics(path):
    with cerulion.RecordingWriter(str(path)) as writer:
        battery = writer.add_channel("/battery", encoding="json", schema=SCHEMA)
        raw = writer.add_channel("/raw")
        again = writer.add_channel("/battery_copy", encoding="json", schema=("Battery", "jsonschema", '{"type": "object"}'))
        for n in range(10):
            writer.write(battery, json.dumps({"n": n}).encode(), log_time_ns=1000 + 10 * n)
            writer.write(raw, np.full(4, n, np.uint16), log_time_ns=1005 + 10 * n, sequence=100 + n)
        writer.write(again, b'{"n": -1}', log_time_ns=999)
        assert writer.counters.messages == 21
    return battery, raw


def test_a_written_recording_reads_back_with_topics_times_encodings_and_schemas(tmp_path):
    path = tmp_path / "two.mcap"
    battery, raw = write_two_topics(path)
    rec = cerulion.Recording(str(path))
    assert rec.topics == ["/battery", "/raw", "/battery_copy"]
    assert rec.message_count == 21 and rec.start_ns == 999 and rec.end_ns == 1095
    assert rec.finalized and rec.library.startswith("cerulion ") and rec.problems == []
    channels = {c.topic: c for c in rec.channels}
    assert channels["/battery"].id == battery and channels["/battery"].encoding == "json"
    assert channels["/battery"].schema == SCHEMA and channels["/battery_copy"].schema == SCHEMA
    assert channels["/raw"].encoding == "" and channels["/raw"].schema is None

    messages = list(rec.messages())
    assert len(messages) == 21
    batteries = [m for m in messages if m.topic == "/battery"]
    assert [m.json() for m in batteries] == [{"n": n} for n in range(10)]
    assert [m.log_time_ns for m in batteries] == [1000 + 10 * n for n in range(10)]
    assert [m.sequence for m in batteries] == list(range(10))  # the channel's own count
    assert all(m.publish_time_ns == m.log_time_ns and m.encoding == "json" and m.schema == SCHEMA for m in batteries)
    raws = [m for m in messages if m.topic == "/raw"]
    assert [m.sequence for m in raws] == [100 + n for n in range(10)]
    assert [np.frombuffer(m.data, np.uint16).tolist() for m in raws] == [[n] * 4 for n in range(10)]
    assert all(m.schema is None and m.encoding == "" for m in raws)


def test_messages_are_filtered_by_topic_and_log_time_and_merged_in_log_time_order(tmp_path):
    path = tmp_path / "two.mcap"
    write_two_topics(path)
    rec = cerulion.Recording(str(path))
    assert {m.topic for m in rec.messages(topics=["/raw"])} == {"/raw"}
    assert len(list(rec.messages(topics="/battery"))) == 10
    assert len(list(rec.messages(topics="battery"))) == 10  # named as the commands take it
    with pytest.raises(cerulion.NotFound, match="has no topic '/nowhere' \\(its topics: "):
        rec.messages(topics=["/raw", "/nowhere"])
    window = list(rec.messages(start_ns=1010, end_ns=1030))
    assert sorted(m.log_time_ns for m in window) == [1010, 1015, 1020, 1025, 1030]
    in_order = [m.log_time_ns for m in rec.messages(order="log_time")]
    assert in_order == sorted(in_order) and in_order[0] == 999
    assert len(list(rec)) == 21
    with pytest.raises(cerulion.InvalidArgument, match="order"):
        rec.messages(order="random")


def test_an_iteration_left_midway_stops_reading(tmp_path):
    path = tmp_path / "many.mcap"
    with cerulion.RecordingWriter(str(path), compression="none", chunk_size=4096) as writer:
        channel = writer.add_channel("/many")
        for n in range(5000):
            writer.write(channel, n.to_bytes(4, "little") * 64)
    messages = cerulion.Recording(str(path)).messages()
    first = next(messages)
    assert int.from_bytes(first.data[:4], "little") == 0
    messages.close()  # the reading thread, waiting for room in its queue, ends
    with pytest.raises(StopIteration):
        next(messages)
    del messages
    another = cerulion.Recording(str(path)).messages()
    next(another)
    del another  # dropped midway without close(): no hang


def test_a_file_that_is_not_mcap_and_a_missing_one_raise(tmp_path):
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"not an mcap file at all")
    with pytest.raises(cerulion.Corrupted):
        cerulion.Recording(str(junk))
    with pytest.raises(cerulion.Error) as raised:
        cerulion.Recording(str(tmp_path / "missing.mcap"))
    assert raised.value.code == cerulion.ErrorCode.NotFound


def test_a_writer_refuses_what_it_cannot_write(tmp_path):
    path = tmp_path / "w.mcap"
    writer = cerulion.RecordingWriter(str(path))
    channel = writer.add_channel("/a")
    with pytest.raises(cerulion.InvalidArgument, match="was not added"):
        writer.write(channel + 7, b"x")
    with pytest.raises(cerulion.InvalidArgument, match="C-contiguous"):
        writer.write(channel, np.arange(100).reshape(10, 10)[:, ::2])
    with pytest.raises(cerulion.InvalidArgument, match="compression"):
        cerulion.RecordingWriter(str(tmp_path / "c.mcap"), compression="gzip")
    writer.close()
    writer.close()
    with pytest.raises(cerulion.Closed):
        writer.write(channel, b"x")
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.RecordingWriter(str(path))  # never replaced unless overwrite
    cerulion.RecordingWriter(str(path), overwrite=True).close()
    assert cerulion.Recording(str(path)).message_count == 0


def test_a_flashback_dump_from_python_holds_what_was_published(topic, tmp_path, cerulion_bin):
    pub = cerulion.Publisher(topic, encoding="json")  # the topic exists before the keeper starts
    keeper = subprocess.Popen([cerulion_bin, "flashback", "start", topic, "--name", "pytest", "--memory", "4MiB",
                               "--dir", str(tmp_path)], stderr=subprocess.PIPE, text=True)
    try:
        assert "keeping" in keeper.stderr.readline()
        for n in range(5):
            pub.publish_json({"n": n})
        dumped = cerulion.flashback_dump(str(tmp_path / "dump.mcap"), name="pytest", note="from python")
        assert dumped.path.endswith("dump.mcap") and dumped.messages == 5
        assert [(t.topic, t.messages) for t in dumped.topics] == [(topic, 5)]
        rec = cerulion.Recording(dumped.path)
        assert [(m.topic, m.encoding, m.json()) for m in rec.messages()] == [(topic, "json", {"n": n}) for n in range(5)]
        with pytest.raises(cerulion.InvalidArgument):
            cerulion.flashback_dump(dumped.path, name="pytest")  # never replaced
        into_directory = cerulion.flashback_dump(str(tmp_path), name="pytest", last=60)
        assert into_directory.path.startswith(str(tmp_path) + "/flashback-") and into_directory.messages == 5
        # Without a path, where `cerulion flashback dump` writes: the keeper's own directory (--dir).
        into_keepers = cerulion.flashback_dump(name="pytest", last=60)
        assert into_keepers.path.startswith(str(tmp_path) + "/flashback-") and into_keepers.messages == 5
    finally:
        keeper.terminate()
        keeper.communicate(timeout=60)
        subprocess.run([cerulion_bin, "flashback", "stop", "--name", "pytest", "--discard"], capture_output=True, timeout=60)


def test_a_flashback_dump_of_no_store_raises_not_found(tmp_path):
    with pytest.raises(cerulion.NotFound):
        cerulion.flashback_dump(str(tmp_path / "none.mcap"), name="no-such-keeper")
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.flashback_dump(str(tmp_path / "none.mcap"), name="bad name!")


def test_a_raw_channel_is_written_as_cerulion_recordings_carry_it_and_read_back_as_raw(tmp_path, cerulion_bin):
    path = tmp_path / "raw.mcap"
    write_two_topics(path)
    info = json.loads(subprocess.run([cerulion_bin, "info", str(path), "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    encodings = {c["topic"]: c["message_encoding"] for c in info["channels"]}
    assert encodings["/raw"] == "x-cerulion-bytes" and encodings["/battery"] == "json"
    channels = {c.topic: c for c in cerulion.Recording(str(path)).channels}
    assert channels["/raw"].encoding == ""
