# SPDX-License-Identifier: Apache-2.0
"""A received sample is the publisher's slot: numpy views of it copy nothing."""

import numpy as np
import pytest

import cerulion
from support import mapping_of, segment_path


def test_a_numpy_view_of_a_sample_lies_in_the_topic_shared_memory(topic, domain):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    pub.publish(np.arange(1000, dtype=np.float64))
    sample = sub.receive(timeout=30)
    view = np.frombuffer(sample, np.float64)
    assert view.ctypes.data == sample.address
    path, _, _ = mapping_of(view.ctypes.data)
    assert path == segment_path(domain, topic)
    assert not view.flags.writeable
    assert np.array_equal(view, np.arange(1000, dtype=np.float64))


def test_what_is_written_through_a_loan_is_the_memory_the_subscriber_reads(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    loan = pub.loan(4096)
    np.frombuffer(loan, np.uint32)[:] = np.arange(1024, dtype=np.uint32)
    written_at = mapping_of(loan.address)
    loan.publish()
    sample = sub.receive(timeout=30)
    read_at = mapping_of(np.frombuffer(sample, np.uint8).ctypes.data)
    # The same bytes of the same file (inode and offset), mapped twice: nothing was copied.
    assert written_at[1:] == read_at[1:]
    assert np.array_equal(sample.as_array(np.uint32), np.arange(1024, dtype=np.uint32))


def test_as_array_gives_a_shaped_read_only_view(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    frame = np.random.default_rng(1).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    pub.publish(frame)
    with sub.receive(timeout=30) as sample:
        view = sample.as_array(np.uint8, frame.shape)
        assert view.ctypes.data == sample.address
        assert np.array_equal(view, frame)
        assert not view.flags.writeable
        del view


def test_a_sample_buffer_refuses_a_writable_view(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    pub.publish(b"read only")
    sample = sub.receive(timeout=30)
    with pytest.raises(ValueError):
        np.frombuffer(sample, np.uint8)[0] = 1
    assert sample.data == b"read only"


def test_a_1920x1080_frame_written_through_a_loan_is_received_as_a_view_of_the_same_bytes(topic, domain):
    shape = (1080, 1920, 3)
    pub = cerulion.Publisher(topic, depth=2)
    sub = cerulion.Subscriber(topic)
    with pub.loan(int(np.prod(shape))) as buf:
        frame = np.frombuffer(buf, np.uint8).reshape(shape)
        frame[:] = 7
        frame[540, 960] = (1, 2, 3)
        written_at = mapping_of(frame.ctypes.data)
        del frame
    with sub.receive(timeout=30) as sample:
        view = sample.as_array(np.uint8, shape)
        path, _, _ = mapping_of(view.ctypes.data)
        end_path, _, _ = mapping_of(view.ctypes.data + view.nbytes - 1)
        # The whole frame lies in the topic's mapping, at the bytes of the file the loan wrote.
        assert path == end_path == segment_path(domain, topic)
        assert mapping_of(view.ctypes.data)[1:] == written_at[1:]
        assert view[540, 960].tolist() == [1, 2, 3] and view[0, 0, 0] == 7
        del view
