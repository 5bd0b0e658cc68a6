#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Publishes "hello world N" on /chatter ten times a second (Ctrl-C stops it), as talker.cpp.
   talker.py [--count N]"""
import sys
import time

import cerulion

count = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--count" else None
pub = cerulion.Publisher("/chatter")
n = 0
try:
    while count is None or n < count:
        pub.publish(f"hello world {n}".encode())  # in lockstep, waits for a slow subscriber
        n += 1
        time.sleep(0.1)
except KeyboardInterrupt:
    pass
