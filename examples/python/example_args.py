# SPDX-License-Identifier: Apache-2.0
"""The options every Python example takes, as the C++ examples' args.hpp:
   --count N    stop after N messages (default: no limit)
   --seconds S  stop after S seconds (default: until Ctrl-C or SIGTERM)"""
import argparse
import signal
import time


class Args:
    def __init__(self, description, extra=None):
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("--count", type=int, default=0, help="stop after N messages")
        parser.add_argument("--seconds", type=float, default=None, help="stop after S seconds")
        if extra:
            extra(parser)
        self.options = parser.parse_args()
        self.count = self.options.count
        self.deadline = None if self.options.seconds is None else time.monotonic() + self.options.seconds
        # SIGTERM stops an example as Ctrl-C does: KeyboardInterrupt, caught in main.
        signal.signal(signal.SIGTERM, signal.default_int_handler)

    def finished(self, done):
        return (self.count > 0 and done >= self.count) or (self.deadline is not None and time.monotonic() >= self.deadline)

    def remaining(self):
        """Seconds left (None: no end), for a receive's timeout."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
