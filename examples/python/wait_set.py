#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""One thread watching /chatter, /imu and /camera/image and a timer, as wait_set.cpp: once a second
it prints how many messages each topic brought.
   wait_set.py [--count N] [--seconds S]"""
import cerulion
from example_args import Args

args = Args(__doc__.splitlines()[0])
ws = cerulion.WaitSet()
topics = ["/chatter", "/imu", "/camera/image"]
# depth: used only by a topic this node creates (the camera's depth).
keys = {ws.add(cerulion.Subscriber(topic, depth=4)): topic for topic in topics}
tick = ws.add_timer(1.0)
received = dict.fromkeys(topics, 0)
total = 0
try:
    while not args.finished(total):
        try:
            event = ws.receive(timeout=args.remaining())  # one message, already taken, or the timer
        except cerulion.Timeout:
            break
        if event.is_message:
            received[keys[event.key]] += 1
            event.sample.release()  # the slot goes back at once (it would when the event is dropped)
            total += 1
        elif event.key == tick:
            print("last second: " + ", ".join(f"{t} {received[t]}" for t in topics) + " messages", flush=True)
            received = dict.fromkeys(topics, 0)
except KeyboardInterrupt:
    pass
