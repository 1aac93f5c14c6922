// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cache of benchmark data by key, built on first use. With `keep_one`, only
// the most recent entry lives: the GPU data of one size at a time (2^28 values
// take a GB per type). Host code only; tests/bench/support_test.cpp checks it.

#include <map>
#include <memory>
#include <utility>

namespace fusekit::bench {

template <class Key, class Value>
class lazy_cache {
 public:
  explicit lazy_cache(bool keep_one) : keep_one_(keep_one) {}

  /// The entry for `key`, made by `make()` (a std::unique_ptr<Value>) when absent.
  /// With keep_one, the other entries are destroyed before the new one is made,
  /// so two large entries never live at once.
  template <class Make>
  Value& get(const Key& key, Make&& make) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (keep_one_) { entries_.clear(); }
      it = entries_.emplace(key, std::forward<Make>(make)()).first;
    }
    return *it->second;
  }

  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  bool keep_one_;
  std::map<Key, std::unique_ptr<Value>> entries_;
};

}  // namespace fusekit::bench
