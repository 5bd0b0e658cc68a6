#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Camera frames between Python processes, side by side in one run: through cerulion (the
frame written into a loaned slot from numpy, received as a numpy view of the slot) and through
what a Python user writes by hand today (multiprocessing.shared_memory, two slots, a pipe to say
which slot is ready and a pipe back to say it is free), the two taking turns frame by frame, each
at the rate asked, so that both meet the machine in the same state (--wait adaptive,block adds a
cerulion receiver per wait strategy, each a column). Per transport: latency from
the timestamp written last before the frame is handed over to its receipt, and the receiver's
memory (VmRSS, RssAnon, RssShmem) after the first frames and after the last: a receiver that
copied frames and kept them would grow by a frame each.

    PYTHONPATH=build/python python3 bench/tools/python_frames.py [--frames 300] [--rate 30] [--wait adaptive,block] [--json]
"""

import argparse
import json
import os
import select
import statistics
import struct
import subprocess
import sys
import time
from multiprocessing import resource_tracker, shared_memory

import numpy as np

import cerulion

STAMP = struct.Struct("<Q")
EARLY = 10  # the memory is read after this many frames, and again after the last


def memory_kib():
    """This process's VmRSS, RssAnon and RssShmem in KiB."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssShmem"):
                fields[key] = int(value.split()[0])
    return fields


def receive_frames(frames, shape, next_frame):
    """Takes `frames` frames from next_frame() (a context manager giving a uint8 view): latencies
    (µs) and the memory after the first frames and after the last."""
    latencies, early = [], None
    for n in range(frames):
        with next_frame() as frame:
            stamp = STAMP.unpack(frame.reshape(-1)[:8].tobytes())[0]
            latencies.append((time.monotonic_ns() - stamp) / 1000)
            frame[::64, ::64, 1].sum()  # the receiver looks at the frame, without copying it
            del frame
        if n + 1 == EARLY:
            early = memory_kib()
    return {"latency_us": latencies, "memory_early_kib": early, "memory_end_kib": memory_kib()}


class CerulionFrame:
    def __init__(self, sub, shape):
        self.sub, self.shape = sub, shape

    def __enter__(self):
        self.sample = self.sub.receive(timeout=10)
        return self.sample.as_array(np.uint8, self.shape)

    def __exit__(self, *exc):
        self.sample.release()


class SharedMemoryFrame:
    def __init__(self, memory, shape, ready, free):
        self.memory, self.shape, self.ready, self.free = memory, shape, ready, free
        self.size = int(np.prod(shape))

    def __enter__(self):
        self.slot = os.read(self.ready, 1)[0]
        return np.ndarray(self.shape, np.uint8, self.memory.buf, offset=self.slot * self.size)

    def __exit__(self, *exc):
        os.write(self.free, bytes([self.slot]))


def receiver(args, shape):
    if args.receive == "cerulion":
        sub = cerulion.Subscriber(args.topic, wait=args.wait)
        print("ready", flush=True)
        result = receive_frames(args.frames, shape, lambda: CerulionFrame(sub, shape))
    else:
        memory = shared_memory.SharedMemory(args.shm)
        # Attaching registers the segment with this process's tracker, which would unlink it at exit.
        resource_tracker.unregister(memory._name, "shared_memory")
        print("ready", flush=True)
        result = receive_frames(args.frames, shape, lambda: SharedMemoryFrame(memory, shape, args.ready_fd, args.free_fd))
        memory.close()
    print(json.dumps(result), flush=True)


def fill(frame, n):
    """Writes the whole frame, then the timestamp last."""
    frame[:] = n & 0xFF
    frame.reshape(-1)[:8] = np.frombuffer(STAMP.pack(time.monotonic_ns()), np.uint8)


class CerulionSender:
    def __init__(self, args, shape, wait):
        self.name = "cerulion" if wait == "adaptive" else f"cerulion/{wait}"
        self.shape, self.nbytes = shape, int(np.prod(shape))
        topic = f"/python-frames-{os.getpid()}-{wait}"
        self.pub = cerulion.Publisher(topic, depth=4)
        self.child = subprocess.Popen([sys.executable, __file__, "--receive", "cerulion", "--topic", topic, "--wait", wait] + common(args),
                                      stdout=subprocess.PIPE, text=True)
        assert self.child.stdout.readline() == "ready\n"
        self.pub.wait_for_subscribers(1, timeout=30)

    def hand_over(self, n):
        with self.pub.loan(self.nbytes, timeout=10) as buf:
            frame = np.frombuffer(buf, np.uint8).reshape(self.shape)  # the slot itself
            fill(frame, n)
            del frame

    def finish(self):
        return json.loads(self.child.communicate(timeout=60)[0])

    def close(self):
        self.child.kill()
        self.pub.close()


class SharedMemorySender:
    name = "shared_memory+pipe"

    def __init__(self, args, shape):
        self.memory = shared_memory.SharedMemory(create=True, size=2 * int(np.prod(shape)))
        self.ready_r, self.ready_w = os.pipe()
        self.free_r, self.free_w = os.pipe()
        self.child = subprocess.Popen([sys.executable, __file__, "--receive", "shm", "--shm", self.memory.name,
                                       "--ready-fd", str(self.ready_r), "--free-fd", str(self.free_w)] + common(args),
                                      stdout=subprocess.PIPE, text=True, pass_fds=(self.ready_r, self.free_w))
        assert self.child.stdout.readline() == "ready\n"
        nbytes = int(np.prod(shape))
        self.frames = [np.ndarray(shape, np.uint8, self.memory.buf, offset=slot * nbytes) for slot in range(2)]
        self.free = [0, 1]
        os.set_blocking(self.free_r, False)

    def hand_over(self, n):
        while True:  # slots the receiver gave back
            try:
                self.free.extend(os.read(self.free_r, 2))
            except BlockingIOError:
                if self.free:
                    break
                select.select([self.free_r], [], [])  # both slots with the receiver: wait for one
        slot = self.free.pop(0)
        fill(self.frames[slot], n)
        os.write(self.ready_w, bytes([slot]))

    def finish(self):
        return json.loads(self.child.communicate(timeout=60)[0])

    def close(self):
        self.child.kill()
        self.frames.clear()  # no view of the segment may be left when it is closed
        for fd in (self.ready_r, self.ready_w, self.free_r, self.free_w):
            os.close(fd)
        self.memory.close()
        self.memory.unlink()


def run(args, shape):
    """The transports in turns, frame by frame on one grid (each at args.rate), so that all meet
    the machine in the same state."""
    senders = []
    try:
        for wait in args.wait.split(","):
            senders.append(CerulionSender(args, shape, wait))
        senders.append(SharedMemorySender(args, shape))
        period = 1 / (args.rate * len(senders))
        start = time.monotonic()
        for n in range(args.frames * len(senders)):
            delay = start + n * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            senders[n % len(senders)].hand_over(n // len(senders))
        return [(sender.name, sender.finish()) for sender in senders]
    finally:
        for sender in senders:
            sender.close()


def common(args):
    return ["--frames", str(args.frames), "--width", str(args.width), "--height", str(args.height)]


def summary(name, result, frames):
    lat = sorted(result["latency_us"])
    early, end = result["memory_early_kib"], result["memory_end_kib"]
    return {"transport": name, "frames": frames, "latency_median_us": statistics.median(lat),
            "latency_p90_us": lat[int(0.9 * (len(lat) - 1))], "latency_max_us": lat[-1],
            "receiver_rss_kib": [early["VmRSS"], end["VmRSS"]], "receiver_anon_kib": [early["RssAnon"], end["RssAnon"]],
            "receiver_shmem_kib": [early["RssShmem"], end["RssShmem"]]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--rate", type=float, default=30, help="frames per second")
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--wait", default="adaptive",
                        help="the cerulion receivers' waits, comma-separated, a column each: adaptive (default), spin, block")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--receive", choices=["cerulion", "shm"], help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--shm", help=argparse.SUPPRESS)
    parser.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--free-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.frames <= EARLY:
        parser.error(f"--frames must be more than {EARLY}")
    if not args.receive and any(w not in ("adaptive", "spin", "block") for w in args.wait.split(",")):
        parser.error(f"--wait takes adaptive, spin or block, comma-separated, not {args.wait!r}")
    shape = (args.height, args.width, 3)
    if args.receive:
        receiver(args, shape)
        return
    results = [summary(name, result, args.frames) for name, result in run(args, shape)]
    for r in results:
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['transport']:>18}: {args.frames} frames {args.width}x{args.height}x3 at {args.rate:g} Hz, latency "
                  f"median/p90/max {r['latency_median_us']:.0f}/{r['latency_p90_us']:.0f}/{r['latency_max_us']:.0f} µs; "
                  f"receiver VmRSS {r['receiver_rss_kib'][0]} -> {r['receiver_rss_kib'][1]} KiB (anon "
                  f"{r['receiver_anon_kib'][0]} -> {r['receiver_anon_kib'][1]}, shmem {r['receiver_shmem_kib'][0]} -> "
                  f"{r['receiver_shmem_kib'][1]})")


if __name__ == "__main__":
    main()
