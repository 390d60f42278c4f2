// One copy of equal immutable values across the process: a table, by a hash of their contents, of the values
// handed out as shared pointers. The mixture's validation samples keep their features through it: under
// --oaa/--csoaa every class keeps the same examples (each with its own label), which are then held once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace lepus {

template <class T>
class HeldOnce {
 public:
  // The held value equal to `value` (== decides), else a copy of it, now held. `hash` is the caller's hash of
  // the contents: equal values must have equal hashes; unequal ones may share one. Thread-safe.
  std::shared_ptr<const T> get(const T& value, uint64_t hash) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto [first, last] = table_.equal_range(hash);
    for (auto it = first; it != last; ++it)
      if (auto held = it->second.lock(); held && *held == value) return held;
    auto made = std::make_shared<const T>(value);
    table_.emplace(hash, made);
    // An entry lapses with its last holder; lapsed ones are swept when the table has doubled since the last sweep.
    if (table_.size() >= sweep_at_) {
      std::erase_if(table_, [](const auto& entry) { return entry.second.expired(); });
      sweep_at_ = std::max<size_t>(kFirstSweep, 2 * table_.size());
    }
    return made;
  }
  size_t entries() const {  // held values, and lapsed ones not yet swept
    const std::lock_guard<std::mutex> lock(mutex_);
    return table_.size();
  }

 private:
  static constexpr size_t kFirstSweep = 1024;
  mutable std::mutex mutex_;
  std::unordered_multimap<uint64_t, std::weak_ptr<const T>> table_;
  size_t sweep_at_ = kFirstSweep;
};

}  // namespace lepus
