#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Prints what arrives on /chatter (Ctrl-C or SIGTERM stops it), as listener.cpp.
   listener.py [--count N] [--seconds S]"""
import cerulion
from example_args import Args

args = Args(__doc__.splitlines()[0])
sub = cerulion.Subscriber("/chatter")
n = 0
try:
    while not args.finished(n):
        try:
            sample = sub.receive(timeout=args.remaining())
        except cerulion.Timeout:
            break  # --seconds ran out
        with sample:  # the sample is a view of the publisher's slot, given back at the end of the block
            print(f"#{sample.seq}: {sample.text()}", flush=True)
        n += 1
except KeyboardInterrupt:
    pass
