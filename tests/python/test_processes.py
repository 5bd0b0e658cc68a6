# SPDX-License-Identifier: Apache-2.0
"""Python processes among others: a killed one is evicted, and C++ programs read and write the
same topics."""

import json
import signal
import subprocess

import numpy as np
import pytest

import cerulion
from support import python_child


def test_a_publisher_goes_on_after_a_python_subscriber_holding_a_sample_is_killed(topic):
    pub = cerulion.Publisher(topic, mode="lockstep", depth=2)
    child = python_child(
        "import sys, time, numpy, cerulion\n"
        "sub = cerulion.Subscriber(sys.argv[1])\n"
        "print('ready', flush=True)\n"
        "sample = sub.receive(timeout=60)\n"
        "view = numpy.frombuffer(sample, numpy.uint8)\n"
        "print('holding', sample.seq, flush=True)\n"
        "time.sleep(600)\n",
        topic)
    try:
        assert child.stdout.readline() == "ready\n"
        pub.wait_for_subscribers(1, timeout=60)
        pub.publish(b"0")
        assert child.stdout.readline() == "holding 0\n"
        pub.publish(b"1")
        with pytest.raises(cerulion.Timeout):  # the child holds message 0: no room, however long
            pub.publish(b"2", timeout=0.3)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
    for n in range(2, 10):  # the dead subscriber is evicted; its slot and place come back
        pub.publish(str(n).encode(), timeout=60)
    assert pub.subscriber_count == 0


def test_cerulion_echo_reads_what_python_publishes(topic, cerulion_bin):
    echo = subprocess.Popen([cerulion_bin, "echo", topic, "--json", "-n", "3"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pub = cerulion.Publisher(topic, encoding="json")
        pub.wait_for_subscribers(1, timeout=60)
        for n in range(3):
            pub.publish_json({"n": n, "text": "é"}, timeout=60)
        out, err = echo.communicate(timeout=60)
    finally:
        echo.kill()
    assert echo.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["data"] for line in lines] == [{"n": n, "text": "é"} for n in range(3)]
    assert [line["seq"] for line in lines] == [0, 1, 2]


def test_python_reads_what_cerulion_pub_publishes_as_numpy_views(topic, cerulion_bin):
    sub = cerulion.Subscriber(topic)
    pub = subprocess.Popen([cerulion_bin, "pub", topic, "--size", "4096", "--fill", "counter", "-n", "3",
                            "--rate", "0", "--wait-subscribers", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for n in range(3):
            with sub.receive(timeout=60) as sample:
                words = np.frombuffer(sample, "<u8")
                assert words.ctypes.data == sample.address
                assert words.size == 512 and np.all(words == n)
                del words
        _, err = pub.communicate(timeout=60)
    finally:
        pub.kill()
    assert pub.returncode == 0, err
