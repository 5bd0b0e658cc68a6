# SPDX-License-Identifier: Apache-2.0
"""A WaitSet waits on several subscribers and timers in one thread, releasing the GIL, and Ctrl-C
or close() ends its wait."""

import threading
import time

import numpy as np
import pytest

import cerulion
from support import ctrl_c_ends_wait, until_another_thread_holds


def test_receive_takes_each_member_message_and_says_which_subscriber_it_came_from(topic):
    pub_a, pub_b = cerulion.Publisher(topic + "_a"), cerulion.Publisher(topic + "_b")
    sub_a, sub_b = cerulion.Subscriber(topic + "_a"), cerulion.Subscriber(topic + "_b")
    ws = cerulion.WaitSet()
    key_a, key_b = ws.add(sub_a), ws.add(sub_b)
    assert key_a != key_b and len(ws) == 2
    pub_a.publish(b"a0")
    pub_b.publish(b"b0")
    pub_a.publish(b"a1")
    got = []
    for _ in range(3):
        event = ws.receive(timeout=30)
        assert event.is_message and not event.is_timer
        assert event.subscriber is (sub_a if event.key == key_a else sub_b)
        got.append((event.key, event.sample.data))
        event.sample.release()
    assert sorted(got) == sorted([(key_a, b"a0"), (key_a, b"a1"), (key_b, b"b0")])
    with pytest.raises(cerulion.Timeout):
        ws.receive(timeout=0.05)


def test_a_wait_set_sample_is_a_view_of_the_slot(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    pub.publish(np.arange(256, dtype=np.uint32))
    with ws.receive(timeout=30).sample as sample:
        view = sample.as_array(np.uint32)
        assert view.ctypes.data == sample.address
        assert np.array_equal(view, np.arange(256, dtype=np.uint32))
        del view


def test_a_timer_fires_with_its_key_while_no_message_comes(topic):
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet(wait="block")
    ws.add(sub)
    tick = ws.add_timer(0.02)
    events = [ws.receive(timeout=30) for _ in range(3)]
    assert all(e.is_timer and e.key == tick and e.sample is None and e.subscriber is None for e in events)


def test_a_timer_and_a_subscriber_never_share_a_key(topic):
    pub = cerulion.Publisher(topic)
    ws = cerulion.WaitSet()
    member = ws.add(cerulion.Subscriber(topic))  # the first member and the first timer
    tick = ws.add_timer(3600)
    assert member != tick
    pub.publish(b"a message, not a tick")
    event = ws.receive(timeout=30)
    assert event.is_message and event.key == member and event.key != tick
    pub.publish(b"ready")
    ready = ws.wait(timeout=30)
    assert ready.message(member) and not ready.timer(member) and not ready.message(tick)


def test_wait_says_which_members_are_ready_and_leaves_the_taking_to_them(topic):
    pub = cerulion.Publisher(topic)
    sub, idle = cerulion.Subscriber(topic), cerulion.Subscriber(topic + "_idle")
    ws = cerulion.WaitSet()
    key, idle_key = ws.add(sub), ws.add(idle)
    pub.publish(b"ready")
    ready = ws.wait(timeout=30)
    assert ready.message(key) and not ready.message(idle_key) and not ready.any_timer
    assert sub.try_receive().data == b"ready"


def test_bad_arguments_raise_documented_errors(topic):
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    with pytest.raises(cerulion.InvalidArgument):
        ws.add(sub)  # already a member
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.WaitSet().add(sub)  # in another set
    for period in (0, -1, float("nan"), "1"):
        with pytest.raises(cerulion.InvalidArgument, match="period"):
            ws.add_timer(period)
    with pytest.raises(cerulion.InvalidArgument):
        cerulion.WaitSet(wait="sometimes")
    with pytest.raises(TypeError):
        ws.add(object())


def test_a_removed_member_is_no_longer_watched_and_may_join_another_set(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    ws.remove(sub)
    assert len(ws) == 0
    pub.publish(b"x")
    with pytest.raises(cerulion.Timeout):
        ws.receive(timeout=0.05)
    other = cerulion.WaitSet()
    other.add(sub)
    assert other.receive(timeout=30).sample.data == b"x"


def test_a_closed_member_leaves_the_set(topic):
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    sub.close()
    with pytest.raises(cerulion.Timeout):
        ws.receive(timeout=0.05)
    assert len(ws) == 0


def test_other_threads_run_while_a_wait_set_waits(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    got = {}

    def waiter():
        got["entered"] = True
        got["data"] = ws.receive(timeout=30).sample.data

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    # Were the GIL held through receive(), this thread would not run before it timed out.
    time.sleep(0.3)
    assert got.get("entered") and "data" not in got
    # The set's wait holds its members' turns: a receive of another thread on one waits for it,
    # here until its own timeout.
    until_another_thread_holds(lambda: sub.receive(timeout=0.05))
    pub.publish(b"from another thread")
    thread.join(60)
    assert got.get("data") == b"from another thread"


def test_close_from_another_thread_ends_the_wait_and_the_iteration(topic):
    sub = cerulion.Subscriber(topic)
    ws = cerulion.WaitSet()
    ws.add(sub)
    events = []
    thread = threading.Thread(target=lambda: events.extend(ws), daemon=True)
    thread.start()
    time.sleep(0.3)
    ws.close()
    thread.join(60)
    assert not thread.is_alive() and events == []
    assert ws.closed
    with pytest.raises(cerulion.Closed):
        ws.receive(timeout=0)
    cerulion.WaitSet().add(sub)  # the closed set let its member go


def test_ctrl_c_interrupts_a_wait_set_receive_with_keyboard_interrupt(topic):
    # Without Ctrl-C, receive() would wait an hour for its timer.
    ctrl_c_ends_wait("ws = cerulion.WaitSet()\nws.add(cerulion.Subscriber(sys.argv[1]))\nws.add_timer(3600)",
                     "ws.receive()", topic)
