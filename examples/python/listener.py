#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Prints what arrives on /chatter (Ctrl-C stops it), as listener.cpp.
   listener.py [--count N]"""
import sys

import cerulion

count = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--count" else None
sub = cerulion.Subscriber("/chatter")
try:
    for n, sample in enumerate(sub, 1):  # the sample is a view of the publisher's slot
        print(f"#{sample.seq}: {sample.text()}", flush=True)
        if n == count:
            break
except KeyboardInterrupt:
    pass
