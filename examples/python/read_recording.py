#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reads an MCAP recording (cerulion record, a flashback dump, any MCAP file): its channels, then
per topic how many messages and the first one, as far as it reads as text.
   read_recording.py FILE [--topic TOPIC]..."""
import argparse
import sys

import cerulion

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("file")
parser.add_argument("--topic", action="append", help="only this topic (repeatable)")
args = parser.parse_args()
try:
    recording = cerulion.Recording(args.file)
except cerulion.Error as error:
    sys.exit(f"read_recording: {error}")
print(f"{args.file}: {recording.message_count} messages, {(recording.end_ns - recording.start_ns) / 1e9:.2f} s, "
      f"written by {recording.library or 'unknown'}")
for channel in recording.channels:
    schema = f", schema {channel.schema.name} ({channel.schema.encoding})" if channel.schema else ""
    print(f"  channel {channel.id}: {channel.topic}, encoding '{channel.encoding or 'raw'}'{schema}")
counts, first = {}, {}
for message in recording.messages(topics=args.topic):  # read as it goes, a few messages in memory
    counts[message.topic] = counts.get(message.topic, 0) + 1
    first.setdefault(message.topic, message)
for topic, count in counts.items():
    try:
        text = first[topic].data.decode()[:60]
    except UnicodeDecodeError:
        text = f"{len(first[topic].data)} bytes"
    print(f"{topic}: {count} messages, first at {first[topic].log_time_ns} ns: {text}")
for problem in recording.problems:
    print(f"problem: {problem}")
