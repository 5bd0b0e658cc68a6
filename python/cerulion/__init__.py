# SPDX-License-Identifier: Apache-2.0
"""cerulion: zero-copy shared-memory messaging between processes on one machine.

    import cerulion, numpy as np

    pub = cerulion.Publisher("/camera")
    with pub.loan(480 * 640 * 3) as buf:            # the topic's slot itself, writable
        np.frombuffer(buf, np.uint8)[:] = 255        # published at the end of the block

    sub = cerulion.Subscriber("/camera")
    with sub.receive(timeout=1.0) as sample:         # a view of the publisher's slot
        frame = sample.as_array(np.uint8, (480, 640, 3))
        ...
        del frame                                    # the slot goes back when the last view is gone

Errors are cerulion.Error (with .code, a cerulion.ErrorCode, and .subject) or a subclass named
after the code: InvalidArgument, InvalidTopicName, PayloadTooLarge, Timeout, LoanLimit... and
Closed for an object used after close() or release(). The domain comes from the `domain`
argument, else $CERULION_DOMAIN, else "default".
"""

from cerulion._cerulion import (  # noqa: F401  (re-exported)
    __version__,
    Channel,
    Closed,
    Corrupted,
    DumpSummary,
    DumpedTopic,
    Error,
    ErrorCode,
    Incompatible,
    Interrupted,
    InvalidArgument,
    InvalidTopicName,
    Loan,
    LoanLimit,
    Mode,
    NotFound,
    OutOfMemory,
    PayloadTooLarge,
    PermissionDenied,
    Publisher,
    RecordedMessage,
    RecordedMessages,
    Recording,
    RecordingWriter,
    Role,
    Sample,
    Schema,
    StartAt,
    Subject,
    Subscriber,
    Timeout,
    TooManyParticipants,
    TopicType,
    WaitSet,
    WaitSetEvent,
    WaitSetReady,
    WaitStrategy,
    WriterCounters,
    flashback_dump,
)

__all__ = [
    "Channel", "Closed", "Corrupted", "DumpSummary", "DumpedTopic", "Error", "ErrorCode",
    "Incompatible", "Interrupted", "InvalidArgument", "InvalidTopicName", "Loan", "LoanLimit",
    "Mode", "NotFound", "OutOfMemory", "PayloadTooLarge", "PermissionDenied", "Publisher",
    "RecordedMessage", "RecordedMessages", "Recording", "RecordingWriter", "Role", "Sample",
    "Schema", "StartAt", "Subject", "Subscriber", "Timeout", "TooManyParticipants", "TopicType",
    "WaitSet", "WaitSetEvent", "WaitSetReady", "WaitStrategy", "WriterCounters",
    "flashback_dump",
]

# help() and tracebacks name the package users import, not the extension module inside it.
for _name in __all__:
    try:
        globals()[_name].__module__ = __name__
    except (AttributeError, TypeError):
        pass
del _name
