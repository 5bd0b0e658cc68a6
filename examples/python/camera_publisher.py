#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A 1920x1080 RGB camera at 30 Hz on /camera/image, as camera_publisher.cpp: each frame is written
from numpy straight into the loaned slot, so its 6 MB are never copied, here or in any viewer.
   camera_publisher.py [--count N] [--seconds S]"""
import time

import numpy as np

import cerulion
from example_args import Args
from messages import FRAME

args = Args(__doc__.splitlines()[0])
# A camera must not wait for a slow viewer: in free run the viewer skips frames and is told how many.
pub = cerulion.Publisher("/camera/image", mode="free-run", depth=4)
rows = np.arange(1080, dtype=np.uint64)
period_ns = 1_000_000_000 // 30
next_ns = time.monotonic_ns()
n = 0
try:
    while not args.finished(n):
        loan = pub.loan(FRAME.itemsize)
        frame = np.frombuffer(loan, FRAME)  # a view of the slot: what is written here is published
        frame["index"], frame["width"], frame["height"] = n, 1920, 1080
        frame["rgb"][0] = ((rows + n) & 0xFF).astype(np.uint8)[:, None, None]  # the slot holds an old frame: write all
        del frame  # no view may outlive the loan
        next_ns += period_ns  # published at the camera's tick, however long filling took
        time.sleep(max(0, next_ns - time.monotonic_ns()) / 1e9)
        loan.publish()
        n += 1
except KeyboardInterrupt:
    pass
