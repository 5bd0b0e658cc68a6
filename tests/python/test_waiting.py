# SPDX-License-Identifier: Apache-2.0
"""Waits release the GIL, and Ctrl-C or close() ends them."""

import threading
import time

import pytest

import cerulion
from support import ctrl_c_ends_wait, until_another_thread_holds


def test_other_threads_run_while_one_waits_in_receive(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    got = {}

    def receiver():
        got["entered"] = True
        try:
            got["sample"] = sub.receive(timeout=30).data
        except cerulion.Error as error:
            got["error"] = error

    thread = threading.Thread(target=receiver, daemon=True)
    thread.start()
    # Were the GIL held through receive(), this thread would not run again before receive() timed
    # out, and the message would come too late.
    time.sleep(0.3)
    assert got.get("entered") and "sample" not in got
    pub.publish(b"from another thread")
    thread.join(60)
    assert got.get("sample") == b"from another thread", got.get("error")


def test_other_threads_run_while_a_lockstep_publisher_waits_for_room(topic):
    pub = cerulion.Publisher(topic, mode="lockstep", depth=1)
    sub = cerulion.Subscriber(topic)
    pub.publish(b"0")
    done = {}

    def publisher():
        done["seq"] = pub.publish(b"1", timeout=30)

    thread = threading.Thread(target=publisher, daemon=True)
    thread.start()
    time.sleep(0.3)
    assert "seq" not in done  # the ring is full until this thread takes message 0
    assert sub.receive(timeout=30).data == b"0"
    thread.join(60)
    assert done.get("seq") == 1


def test_ctrl_c_interrupts_a_receive_with_keyboard_interrupt(topic):
    ctrl_c_ends_wait("sub = cerulion.Subscriber(sys.argv[1])", "sub.receive()", topic)


def test_close_from_another_thread_ends_a_receive(topic):
    sub = cerulion.Subscriber(topic)
    got = {}

    def receiver():
        try:
            sub.receive()
        except cerulion.Error as error:
            got["error"] = error

    thread = threading.Thread(target=receiver, daemon=True)
    thread.start()
    time.sleep(0.3)
    sub.close()
    thread.join(60)
    assert isinstance(got.get("error"), cerulion.Closed)


def test_a_second_thread_receiving_on_the_same_subscriber_waits_for_the_first(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    got = {}
    thread = threading.Thread(target=lambda: got.setdefault("first", sub.receive(timeout=60).data), daemon=True)
    thread.start()
    until_another_thread_holds(lambda: sub.receive(timeout=0.05))
    assert sub.try_receive() is None  # the other thread's receive takes the next message
    pub.publish(b"one")
    pub.publish(b"two")
    assert sub.receive(timeout=60).data == b"two"
    thread.join(60)
    assert got.get("first") == b"one"


def test_a_timeout_names_the_topic(topic):
    sub = cerulion.Subscriber(topic)
    with pytest.raises(cerulion.Timeout) as raised:
        sub.receive(timeout=0.05)
    assert isinstance(raised.value, TimeoutError)
    assert raised.value.code == cerulion.ErrorCode.Timeout
    assert raised.value.subject.kind == "topic" and raised.value.subject.name == topic
