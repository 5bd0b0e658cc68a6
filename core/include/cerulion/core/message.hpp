// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed messages: what a plain struct must be to travel as its own bytes.

#include <concepts>
#include <cstddef>
#include <ranges>
#include <string>
#include <type_traits>

#include "cerulion/core/status.hpp"

namespace cerulion {

/// A type whose bytes are the whole message: trivially copyable, and not something that only
/// points at its data elsewhere (a pointer, a string_view, a span), which would publish an
/// address instead of the data. A struct of numbers and fixed arrays is the typical case.
template <typename T>
concept Message = std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_pointer_v<T> &&
                  !std::is_member_pointer_v<T> && !std::is_null_pointer_v<T> && !std::is_array_v<T> &&
                  !std::ranges::borrowed_range<T>;

namespace detail {
/// InvalidArgument when `size` bytes at `data` cannot be read as a T: a different size, or an
/// address T's alignment forbids.
Status check_message_view(const void* data, std::size_t size, std::size_t type_size, std::size_t type_align);
}  // namespace detail

}  // namespace cerulion
