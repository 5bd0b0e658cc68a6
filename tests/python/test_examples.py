# SPDX-License-Identifier: Apache-2.0
"""The Python examples run and print what they should: talker and listener, the camera pair, the
wait set, the recording reader."""

import pathlib
import re
import signal
import subprocess
import sys

import cerulion

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def test_listener_prints_what_talker_publishes_and_both_stop_on_ctrl_c():
    listener = subprocess.Popen([sys.executable, EXAMPLES / "listener.py", "--count", "3"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    talker = subprocess.Popen([sys.executable, EXAMPLES / "talker.py"], stderr=subprocess.PIPE, text=True)
    try:
        out, err = listener.communicate(timeout=120)
        talker.send_signal(signal.SIGINT)
        _, talker_err = talker.communicate(timeout=60)
    finally:
        listener.kill()
        talker.kill()
    assert listener.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 3 and all(": hello world " in line for line in lines), out
    assert talker.returncode == 0, talker_err


def test_talker_and_listener_take_seconds_and_stop_on_sigterm():
    listener = run_example("listener", "--seconds", "60")
    talker = run_example("talker", "--seconds", "3")
    talker_out = finish(talker)
    listener.send_signal(signal.SIGTERM)
    out = finish(listener)
    assert talker_out == ""
    assert "hello world" in out, out


def run_example(name, *args):
    return subprocess.Popen([sys.executable, EXAMPLES / f"{name}.py", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process, timeout=120):
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        process.kill()
    assert process.returncode == 0, err
    return out


def test_camera_viewer_prints_the_frame_rate_and_latency_of_camera_publisher_frames():
    viewer = run_example("camera_viewer", "--count", "20")
    publisher = run_example("camera_publisher", "--seconds", "60")
    out = finish(viewer)
    publisher.send_signal(signal.SIGTERM)
    finish(publisher)
    assert re.search(r"^[0-9.]+ fps, latency median [0-9.]+ us, max [0-9.]+ us, \d+ lost, last frame \d+$", out, re.M), out


def test_wait_set_counts_each_topic_and_ticks_once_a_second():
    wait_set = run_example("wait_set", "--seconds", "60")
    talker = run_example("talker", "--count", "600")
    camera = run_example("camera_publisher", "--seconds", "60")
    try:
        line = wait_set.stdout.readline()
        while not re.match(r"last second: /chatter [1-9]\d*, /imu 0, /camera/image [1-9]\d* messages", line):
            assert line, wait_set.stderr.read()
            line = wait_set.stdout.readline()
    finally:
        for process in (wait_set, talker, camera):
            process.send_signal(signal.SIGINT)
        for process in (wait_set, talker, camera):
            finish(process)


def test_read_recording_prints_the_channels_and_messages_of_a_file(tmp_path):
    path = tmp_path / "r.mcap"
    with cerulion.RecordingWriter(str(path)) as writer:
        channel = writer.add_channel("/battery", encoding="json", schema=("Battery", "jsonschema", "{}"))
        for n in range(3):
            writer.write(channel, b'{"volts": 12}')
    out = finish(run_example("read_recording", str(path)))
    assert "channel 0: /battery, encoding 'json', schema Battery (jsonschema)" in out
    assert re.search(r'^/battery: 3 messages, first at \d+ ns: {"volts": 12}$', out, re.M), out
    missing = run_example("read_recording", str(tmp_path / "missing.mcap"))
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 1 and "missing.mcap" in err
