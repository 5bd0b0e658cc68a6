# SPDX-License-Identifier: Apache-2.0
"""ROS 2 messages from Python: a recording's cdr messages decoded with their ros2msg schema
(rosbag2's own test recording where the shared reference folder has it), and json() that names
what it cannot read instead of raising a bare JSONDecodeError."""

import os
import struct

import pytest

import cerulion

REFERENCE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference", "ros2", "cdr_test_0.mcap")
POINT = cerulion.Schema("geometry_msgs/msg/Point", "ros2msg", "float64 x\nfloat64 y\nfloat64 z\n")
BLOB = cerulion.Schema("pkg/msg/Blob", "ros2msg", "string name\nuint8[] data\n")


def test_a_recorded_ros2_message_decodes_to_a_dict_in_field_order(tmp_path):
    path = tmp_path / "ros2.mcap"
    with cerulion.RecordingWriter(str(path)) as writer:
        point = writer.add_channel("/point", encoding="cdr", schema=POINT)
        blob = writer.add_channel("/blob", encoding="cdr", schema=BLOB)
        writer.write(point, b"\x00\x01\x00\x00" + struct.pack("<ddd", 1.5, -2.0, 3.0), log_time_ns=1)
        writer.write(blob, b"\x00\x01\x00\x00" + struct.pack("<I", 3) + b"hi\x00\x00" + struct.pack("<I", 2) + b"\x07\x08",
                     log_time_ns=2)
    messages = list(cerulion.Recording(str(path)))
    assert messages[0].decode() == {"x": 1.5, "y": -2.0, "z": 3.0}
    assert list(messages[0].decode()) == ["x", "y", "z"]
    assert messages[0].json() == messages[0].decode()
    assert messages[1].decode() == {"name": "hi", "data": b"\x07\x08"}


def test_json_and_decode_name_the_message_they_cannot_read(tmp_path):
    path = tmp_path / "bad.mcap"
    with cerulion.RecordingWriter(str(path)) as writer:
        raw = writer.add_channel("/raw")
        text = writer.add_channel("/text", encoding="json")
        point = writer.add_channel("/point", encoding="cdr", schema=POINT)
        writer.write(raw, b"\x01\x02", log_time_ns=1)
        writer.write(text, b"{not json", log_time_ns=2)
        writer.write(point, b"\x00\x01\x00\x00\x01", log_time_ns=3)
    raw_message, text_message, point_message = list(cerulion.Recording(str(path)))
    with pytest.raises(cerulion.InvalidArgument, match="of /raw carries raw bytes, not json"):
        raw_message.json()
    with pytest.raises(cerulion.InvalidArgument, match="of /text is not JSON"):
        text_message.json()
    with pytest.raises(cerulion.InvalidArgument, match="decode\\(\\) reads ROS 2 messages"):
        text_message.decode()
    with pytest.raises(cerulion.InvalidArgument, match="geometry_msgs/msg/Point field x: the message ends"):
        point_message.decode()


@pytest.mark.skipif(not os.path.exists(REFERENCE), reason="the shared reference folder is absent")
def test_rosbag2s_recording_decodes_to_the_values_it_holds():
    values = [m.decode() for m in cerulion.Recording(REFERENCE).messages(topics="/test_topic")]
    assert len(values) == 3
    assert all(v["int32_value"] == 123 for v in values)
