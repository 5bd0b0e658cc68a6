# SPDX-License-Identifier: Apache-2.0
"""Bad input is a cerulion.Error subclass carrying core's code, never a crash or a corrupted slot."""

import numpy as np
import pytest

import cerulion


def test_a_buffer_over_the_topic_ceiling_is_payload_too_large(topic):
    pub = cerulion.Publisher(topic, max_payload=1024)
    with pytest.raises(cerulion.PayloadTooLarge) as raised:
        pub.publish(bytes(2048))
    assert raised.value.code == cerulion.ErrorCode.PayloadTooLarge
    assert (raised.value.subject.kind, raised.value.subject.asked, raised.value.subject.ceiling) == ("size", 2048, 1024)
    with pytest.raises(cerulion.PayloadTooLarge):
        pub.loan(1025)


def test_a_non_contiguous_array_is_refused(topic):
    pub = cerulion.Publisher(topic)
    with pytest.raises(cerulion.InvalidArgument, match="C-contiguous"):
        pub.publish(np.arange(100).reshape(10, 10)[:, ::2])
    with pytest.raises(cerulion.InvalidArgument):
        pub.publish("text is not bytes")
    pub.publish(np.ascontiguousarray(np.arange(100).reshape(10, 10)[:, ::2]))


def test_a_topic_name_core_refuses_is_invalid_topic_name():
    with pytest.raises(cerulion.InvalidTopicName) as raised:
        cerulion.Publisher("/a/../b")
    assert raised.value.code == cerulion.ErrorCode.InvalidTopicName
    assert isinstance(raised.value, ValueError)
    with pytest.raises(cerulion.InvalidTopicName):
        cerulion.Subscriber("/x", domain="no/slash")


def test_an_unknown_encoding_or_option_is_invalid_argument(topic):
    with pytest.raises(cerulion.InvalidArgument, match="encoding"):
        cerulion.Publisher(topic, encoding="no-such-encoding")
    with pytest.raises(cerulion.InvalidArgument) as raised:
        cerulion.Publisher(topic, mode="sometimes")
    assert raised.value.subject.kind == "option" and raised.value.subject.name == "mode"
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.Subscriber(topic, wait="nap")
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.Subscriber(topic, start="middle")
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.Subscriber(topic).receive(timeout=-1)


def test_a_depth_that_contradicts_the_topic_is_incompatible(topic):
    first = cerulion.Publisher(topic, depth=4)
    with pytest.raises(cerulion.Incompatible):
        cerulion.Publisher(topic, depth=8)
    assert first.depth == 4


def test_as_array_refuses_a_dtype_that_does_not_divide_the_payload(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    pub.publish(bytes(10))
    sample = sub.receive(timeout=30)
    with pytest.raises(cerulion.InvalidArgument, match="whole number"):
        sample.as_array(np.float32)
    with pytest.raises(cerulion.InvalidArgument, match="shape"):
        sample.as_array(np.uint8, (3, 3))
    assert sample.as_array(np.uint16, (5,)).shape == (5,)


def test_a_view_alive_at_the_end_of_a_loan_block_refuses_the_publish(topic):
    pub = cerulion.Publisher(topic, depth=2)
    sub = cerulion.Subscriber(topic)
    with pytest.raises(cerulion.InvalidArgument, match="still alive"):
        with pub.loan(8) as buf:
            array = np.frombuffer(buf, np.uint8)
            array[:] = 1
    assert sub.try_receive() is None
    array[:] = 2  # writes a slot nobody will read: it goes back only when the array is gone
    del array
    with pub.loan(8) as buf:
        np.frombuffer(buf, np.uint8)[:] = 3
    assert sub.receive(timeout=30).data == bytes([3]) * 8


def test_an_exception_in_a_loan_block_discards_the_loan(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    with pytest.raises(KeyError):
        with pub.loan(8) as buf:
            buf[:] = b"unsent!!"
            raise KeyError("camera failed")
    pub.publish(b"sent")
    assert sub.receive(timeout=30).data == b"sent"


def test_every_depth_a_topic_cannot_take_is_said_in_one_wording(topic):
    for depth in (0, -1, 5000, 2**40):
        with pytest.raises(cerulion.InvalidArgument, match=r"depth must be 1\.\.4096"):
            cerulion.Publisher(topic, depth=depth)


def test_a_json_topic_refuses_what_is_not_json_as_pub_does(topic):
    pub = cerulion.Publisher(topic, encoding="json")
    sub = cerulion.Subscriber(topic)
    with pytest.raises(cerulion.InvalidArgument, match="not JSON.*the topic carries json.*nothing published"):
        pub.publish(b"{not json")
    pub.publish(b'{"a": 1}')
    assert sub.receive(timeout=30).json() == {"a": 1}
    # Another publisher joining the topic checks what it carries, declared or not by itself.
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.Publisher(topic).publish(b"\xff")
