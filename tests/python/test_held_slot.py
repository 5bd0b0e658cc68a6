# SPDX-License-Identifier: Apache-2.0
"""A slot stays held while a Sample or any view of it lives, and release() never frees a slot a
view still reads."""

import gc

import numpy as np
import pytest

import cerulion


def test_a_view_holds_its_slot_against_a_lockstep_publisher_until_it_is_gone(topic):
    pub = cerulion.Publisher(topic, mode="lockstep", depth=2)
    sub = cerulion.Subscriber(topic)
    pub.publish(np.full(64, 7, np.uint8))
    sample = sub.receive(timeout=30)
    view = np.frombuffer(sample, np.uint8)
    sample.release()
    del sample
    gc.collect()
    pub.publish(np.full(64, 8, np.uint8))  # the ring's second place
    # The view holds message 0, so a third message has no room, however long it waits.
    with pytest.raises(cerulion.Timeout):
        pub.publish(np.full(64, 9, np.uint8), timeout=0.3)
    assert np.all(view == 7)
    del view
    gc.collect()
    pub.publish(np.full(64, 9, np.uint8), timeout=30)
    assert sub.receive(timeout=30).data == bytes([8]) * 64


def test_a_with_block_gives_the_slot_back_at_its_end(topic):
    pub = cerulion.Publisher(topic, mode="lockstep", depth=2)
    sub = cerulion.Subscriber(topic)
    held = []
    for n in range(10):  # far more than the ring holds: each with block gives its slot back
        pub.publish(bytes([n]) * 8, timeout=30)
        with sub.receive(timeout=30) as sample:
            assert sample.data == bytes([n]) * 8
            held.append(sample)  # the object outlives the block; its slot does not
    assert all(s.released for s in held)


def test_a_subscriber_holds_at_most_two_samples(topic):
    pub = cerulion.Publisher(topic, depth=4)
    sub = cerulion.Subscriber(topic)
    for n in range(3):
        pub.publish(bytes([n]))
    first, second = sub.receive(timeout=30), sub.receive(timeout=30)
    with pytest.raises(cerulion.LoanLimit) as raised:
        sub.receive(timeout=30)
    assert raised.value.code == cerulion.ErrorCode.LoanLimit
    assert "release one first (sample.release(), or take it in a with block" in str(raised.value)
    with pytest.raises(cerulion.LoanLimit, match="release one first"):
        sub.try_receive()
    first.release()
    assert sub.receive(timeout=30).data == bytes([2])
    del second
