# SPDX-License-Identifier: Apache-2.0
"""The Python examples run: examples/python/listener.py prints what talker.py publishes."""

import pathlib
import signal
import subprocess
import sys

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
