#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Watches /camera/image and prints, once a second, the frame rate and the latency (from the
publisher's publish() to this process holding the frame), as camera_viewer.cpp. Each frame is a
numpy view of the publisher's slot: nothing is copied.
   camera_viewer.py [--count N] [--seconds S]"""
import time

import cerulion
from example_args import Args
from messages import FRAME

args = Args(__doc__.splitlines()[0])
sub = cerulion.Subscriber("/camera/image", depth=4)  # the camera's depth, should the viewer create the topic
latencies, lost, index, window_start = [], 0, 0, None


def report(now):
    global latencies, lost, window_start
    latencies.sort()
    print(f"{len(latencies) / ((now - window_start) / 1e9):.1f} fps, latency median {latencies[len(latencies) // 2] / 1e3:.2f} us, "
          f"max {latencies[-1] / 1e3:.1f} us, {lost} lost, last frame {index}", flush=True)
    latencies, lost, window_start = [], 0, now


n = 0
try:
    while not args.finished(n):
        try:
            sample = sub.receive(timeout=args.remaining())
        except cerulion.Timeout:
            break
        with sample:
            now = time.monotonic_ns()
            window_start = window_start or now  # the rate counts from the first frame on
            # as_array checks the size: a publisher of another type here is an error, not a misread image.
            frame = sample.as_array(FRAME)[0]
            index = int(frame["index"])
            rgb = frame["rgb"]  # (1080, 1920, 3) uint8, a view of the slot: rgb[y, x] is a pixel
            del frame, rgb  # the slot goes back at the end of the with block once no view is left
            lost += sample.lost_before
            latencies.append(now - sample.publish_time_ns)
        n += 1
        if now - window_start >= 1_000_000_000:
            report(now)
except KeyboardInterrupt:
    pass
if len(latencies) > 1:
    report(time.monotonic_ns())
