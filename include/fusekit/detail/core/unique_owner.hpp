// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `unique_owner`: the base of every fusekit type that owns a CUDA resource and
/// releases it once, in its destructor: neither copyable nor movable.

namespace fusekit {
namespace detail {
inline namespace core {

struct unique_owner {
  unique_owner() = default;
  unique_owner(const unique_owner&) = delete;
  unique_owner& operator=(const unique_owner&) = delete;
};

}  // namespace core
}  // namespace detail
}  // namespace fusekit
