#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Publishes "hello world N" on /chatter ten times a second (Ctrl-C or SIGTERM stops it), as talker.cpp.
   talker.py [--count N] [--seconds S]"""
import time

import cerulion
from example_args import Args

args = Args(__doc__.splitlines()[0])
pub = cerulion.Publisher("/chatter")
n = 0
try:
    while not args.finished(n):
        pub.publish(f"hello world {n}".encode())  # in lockstep, waits for a slow subscriber
        n += 1
        time.sleep(0.1)
except KeyboardInterrupt:
    pass
