// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole public API of the cerulion shared-memory transport: every header of core/include
// (internals live in core/internal and are never installed) and the version.
#include "cerulion/core/base64.hpp"
#include "cerulion/core/discovery.hpp"
#include "cerulion/core/message.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/pacing.hpp"
#include "cerulion/core/protobuf_schema.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/removed_topics.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/core/stop.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/core/wait_set.hpp"
#include "cerulion/core/wait_trace.hpp"
#include "cerulion/core/warm.hpp"
#include "cerulion/version.hpp"
