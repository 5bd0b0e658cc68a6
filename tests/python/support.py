# SPDX-License-Identifier: Apache-2.0
"""Helpers the Python tests share: where a buffer lies in memory, a topic's file, child processes."""

import signal
import subprocess
import sys
import time


def mapping_of(address):
    """The mapping of this process holding `address`: (path, inode, file offset of the address)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if low <= address < high:
                path = fields[5].strip() if len(fields) > 5 else ""
                return path, int(fields[4]), int(fields[2], 16) + (address - low)
    raise AssertionError(f"address {address:#x} is in no mapping of this process")


def segment_path(domain, topic):
    """The file of a topic's shared memory (core/include/cerulion/core/names.hpp)."""
    return f"/dev/shm/cerulion.{domain}:" + topic.strip("/").replace("/", ":")


def python_child(script, *args, **popen):
    """Starts `script` in a Python process of the interpreter running the tests, with text pipes."""
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def ctrl_c_ends_wait(setup, wait, *args):
    """Runs `setup` then `wait` (a statement that would wait for ever) in a child Python, sends it
    SIGINT once it waits, and asserts that the wait raised KeyboardInterrupt."""
    indented = "\n".join("    " + line for line in wait.splitlines())
    child = python_child(f"import sys, cerulion\n{setup}\nprint('waiting', flush=True)\ntry:\n{indented}\n"
                         "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n    sys.exit(3)\n", *args)
    try:
        assert child.stdout.readline() == "waiting\n"
        time.sleep(0.3)  # into the wait
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 3, err
    assert out == "interrupted\n"


def until_another_thread_holds(call, attempts=600):
    """Calls `call` (a call with a short timeout on an object another thread is about to wait on)
    until it times out for want of its turn rather than of a message: the other thread waits."""
    import cerulion

    for _ in range(attempts):
        try:
            call()
        except cerulion.Timeout as error:
            if "another thread's call" in str(error):
                return
        time.sleep(0.05)
    raise AssertionError("the other thread never held its turn")
