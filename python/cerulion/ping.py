# SPDX-License-Identifier: Apache-2.0
"""Round trips between two Python processes over cerulion topics, as `cerulion ping` measures
them between two C++ ones: requests on PREFIX/ping, replies on PREFIX/pong, each a loaned slot of
SIZE bytes of which only the 8-byte timestamp is written (nothing else is copied, so a 16 MiB
round trip costs what a 64 B one does).

    python3 -m cerulion.ping                       # 64 B at 100 Hz, 500 round trips
    python3 -m cerulion.ping -s 64 -s 16MiB --against build/cerulion   # and `cerulion ping` too

Several sizes take turns slot by slot (a pong process each), so the ratio between sizes compares
like with like. With --against, `cerulion ping` then runs each size at the same rate and count in
the same run, and the ratio of the medians is printed.
"""

import argparse
import json
import os
import re
import signal
import statistics
import struct
import subprocess
import sys
import time

import cerulion

_STAMP = struct.Struct("<Q")
_STOP = 0xFFFFFFFFFFFFFFFF


def _size(text):
    match = re.fullmatch(r"(\d+)\s*(B|KiB|MiB|GiB)?", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (64, 4KiB, 16MiB)")
    size = int(match.group(1)) * {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[match.group(2)]
    if size < _STAMP.size:
        raise argparse.ArgumentTypeError("a size holds the 8-byte timestamp: at least 8")
    return size


def _pin(cpu):
    """Runs this process on `cpu` when the machine has it (as `cerulion ping --cpus auto`)."""
    if hasattr(os, "sched_setaffinity") and cpu in os.sched_getaffinity(0) and len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {cpu})


def pong(prefix):
    """Replies to every request on PREFIX/ping with a slot of its size carrying its timestamp."""
    _pin(1)
    replies = cerulion.Publisher(prefix + "/pong")
    requests = cerulion.Subscriber(prefix + "/ping")
    print("ready", flush=True)
    for request in requests:
        with memoryview(request) as view:
            size, stamp = len(view), bytes(view[:_STAMP.size])
        request.release()  # before loaning: lockstep never waits on our own hold
        if _STAMP.unpack(stamp)[0] == _STOP:
            return
        with replies.loan(size) as reply:
            reply[:_STAMP.size] = stamp


class _Lane:
    """One size's topics and pong process."""

    def __init__(self, prefix, size):
        self.size, self.rtts, self.lost = size, [], 0
        self.requests = cerulion.Publisher(prefix + "/ping")
        self.replies = cerulion.Subscriber(prefix + "/pong")
        self.pong = subprocess.Popen([sys.executable, "-m", "cerulion.ping", "--pong", "--topic", prefix],
                                     stdout=subprocess.PIPE, text=True)

    def start(self, timeout):
        if self.pong.stdout.readline() != "ready\n":
            raise SystemExit("cerulion.ping: the pong did not start")
        self.requests.wait_for_subscribers(1, timeout=timeout)

    def round_trip(self, timeout, measured):
        with self.requests.loan(self.size, timeout=timeout) as request:
            request[:_STAMP.size] = _STAMP.pack(time.monotonic_ns())  # the last thing before publishing
        try:
            with self.replies.receive(timeout=timeout) as reply, memoryview(reply) as view:
                stamp = _STAMP.unpack(view[:_STAMP.size])[0]
                now = time.monotonic_ns()
        except cerulion.Timeout:
            self.lost += 1
            return
        if measured:
            self.rtts.append((now - stamp) / 1000)

    def stop(self, timeout):
        if self.pong.poll() is None:
            try:
                with self.requests.loan(self.size, timeout=timeout) as request:
                    request[:_STAMP.size] = _STAMP.pack(_STOP)
                self.pong.wait(timeout=timeout)
            except (cerulion.Error, subprocess.TimeoutExpired):
                self.pong.send_signal(signal.SIGINT)
                self.pong.wait(timeout=timeout)


def ping(prefix, sizes, rate, count, warmup, timeout):
    """Per size, the round-trip times in µs of `count` requests after `warmup`, and how many were
    lost. The sizes take turns slot by slot on one grid, each at `rate` Hz, so that each meets the
    machine in the same state (on a shared machine it changes from one minute to the next)."""
    lanes = []
    try:
        for size in sizes:
            lanes.append(_Lane(f"{prefix}-{size}", size))
        for lane in lanes:
            lane.start(timeout)
        _pin(0)
        period = 1 / (rate * len(lanes)) if rate > 0 else 0  # each size at `rate`
        start = time.monotonic()
        for n in range((warmup + count) * len(lanes)):
            if period:
                delay = start + n * period - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            lanes[n % len(lanes)].round_trip(timeout, measured=n >= warmup * len(lanes))
        return {lane.size: (lane.rtts, lane.lost) for lane in lanes}
    finally:
        for lane in lanes:
            lane.stop(timeout)


def cpp_ping(cerulion_bin, size, rate, count, warmup):
    """`cerulion ping` over the same size, rate and count: its median round trip in µs."""
    out = subprocess.run([cerulion_bin, "ping", "-s", str(size), "-r", str(rate), "-c", str(count), "--warmup",
                          str(warmup), "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["rtt_us"]["median"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m cerulion.ping", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-s", "--size", type=_size, action="append", help="payload size, repeatable (default 64)")
    parser.add_argument("-r", "--rate", type=float, default=100, help="requests per second of each size; 0: back to back")
    parser.add_argument("-c", "--count", type=int, default=500, help="measured round trips")
    parser.add_argument("--warmup", type=int, default=50, help="round trips before measuring")
    parser.add_argument("--timeout", type=float, default=5, help="seconds to wait for a reply")
    parser.add_argument("--topic", default=f"/cerulion-py-ping-{os.getpid()}", help="topic prefix")
    parser.add_argument("--against", metavar="CERULION", help="also run this `cerulion ping`, in the same run")
    parser.add_argument("--json", action="store_true", help="one JSON object per size")
    parser.add_argument("--pong", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count < 1 or args.warmup < 0 or args.rate < 0:
        parser.error("count ≥ 1, warmup ≥ 0 and rate ≥ 0")
    try:
        if args.pong:
            pong(args.topic)
            return 0
        sizes = list(dict.fromkeys(args.size or [64]))
        measured = ping(args.topic, sizes, args.rate, args.count, args.warmup, args.timeout)
        for size in sizes:
            rtts, lost = measured[size]
            if not rtts:
                print(f"cerulion.ping: every reply of {size} B was lost", file=sys.stderr)
                return 1
            quantiles = statistics.quantiles(rtts, n=100) if len(rtts) > 1 else rtts * 99
            result = {"size_bytes": size, "rate_hz": args.rate, "count": len(rtts), "lost": lost,
                      "rtt_us": {"min": min(rtts), "median": statistics.median(rtts), "p90": quantiles[89],
                                 "max": max(rtts)}}
            if size != sizes[0]:
                result["median_over_first_size"] = result["rtt_us"]["median"] / statistics.median(measured[sizes[0]][0])
            if args.against:
                result["cpp_rtt_median_us"] = cpp_ping(args.against, size, args.rate, args.count, args.warmup)
                result["python_over_cpp"] = result["rtt_us"]["median"] / result["cpp_rtt_median_us"]
            if args.json:
                print(json.dumps(result), flush=True)
            else:
                r = result["rtt_us"]
                line = (f"{size} B at {args.rate:g} Hz, {len(rtts)} round trips, {lost} lost: Python rtt "
                        f"min/median/p90/max = {r['min']:.1f}/{r['median']:.1f}/{r['p90']:.1f}/{r['max']:.1f} µs")
                if size != sizes[0]:
                    line += f" ({result['median_over_first_size']:.2f}x {sizes[0]} B)"
                if args.against:
                    line += (f"; cerulion ping median {result['cpp_rtt_median_us']:.1f} µs "
                             f"(Python {result['python_over_cpp']:.2f}x)")
                print(line, flush=True)
    except KeyboardInterrupt:
        return 130
    except cerulion.Error as error:
        print(f"cerulion.ping: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
