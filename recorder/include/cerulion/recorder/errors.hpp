// SPDX-License-Identifier: Apache-2.0
#pragma once
// Errors of the recorder library. It reuses the transport's Status/Result (header-only use), so a
// command line tool handles both the same way. Nothing in recorder/ throws across its API.
//
// Codes used here: InvalidArgument (a bad option or call order), NotFound (no such file),
// PermissionDenied, Corrupted (the bytes are not a valid MCAP file, or a CRC does not match),
// SystemError (an I/O call failed; the message carries errno's text). An error about a file
// carries its path as its subject (SubjectKind::Path).

#include "cerulion/core/status.hpp"

namespace cerulion::recorder {

using cerulion::ErrorCode;
using cerulion::Result;
using cerulion::Status;
using cerulion::Subject;
using cerulion::SubjectKind;

}  // namespace cerulion::recorder
