# SPDX-License-Identifier: Apache-2.0
"""The examples' message layouts as numpy dtypes, byte for byte those of examples/messages.hpp, so
Python and C++ examples read each other's topics."""
import numpy as np

# A 1920x1080 RGB frame (example::Frame): index, width, height, then the pixels.
FRAME = np.dtype([("index", "<u8"), ("width", "<u4"), ("height", "<u4"), ("rgb", "u1", (1080, 1920, 3))])
