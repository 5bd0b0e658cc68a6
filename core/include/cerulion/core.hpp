// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole public API of the cerulion shared-memory transport.
#include "cerulion/core/discovery.hpp"
#include "cerulion/core/message.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/core/stop.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/wait_set.hpp"
#include "cerulion/core/warm.hpp"
