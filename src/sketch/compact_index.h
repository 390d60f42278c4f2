// Slot -> dense position, given on first sight: lets a dense (Eigen) matrix or a sketch's columns cover only
// the slots a learner has actually seen instead of all 2^b. Open addressing with linear probing over a
// power-of-two table kept at most half full; positions are 0, 1, 2, ... in first-seen order and never change
// until clear(). A bucket holds the slot with its position: a look-up reads one cache line, not two.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lepus {

class CompactIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The slot's position, or kNone if it was never inserted.
  uint32_t find(uint64_t slot) const {
    if (table_.empty()) return kNone;
    const size_t mask = table_.size() - 1;
    for (size_t i = bucket(slot);; i = (i + 1) & mask) {
      const Bucket& e = table_[i];
      if (e.position == 0) return kNone;
      if (e.slot == slot) return e.position - 1;
    }
  }
  // Asks for the slot's bucket ahead of find(): a caller with many slots to look up issues these first.
  void prefetch(uint64_t slot) const {
    if (!table_.empty()) __builtin_prefetch(table_.data() + bucket(slot));
  }
  // The slot's position, given now (the next one) if it is new.
  uint32_t insert(uint64_t slot);
  size_t size() const { return slots_.size(); }
  uint64_t slot(uint32_t position) const { return slots_[position]; }
  const std::vector<uint64_t>& slots() const { return slots_; }  // by position
  void clear();

 private:
  size_t bucket(uint64_t slot) const {  // Fibonacci hashing: slots of small numeric ids spread too
    return static_cast<size_t>((slot * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(size_t buckets);
  struct Bucket {
    uint64_t slot;
    uint32_t position;  // 0 = empty, else 1 + position
  };
  std::vector<uint64_t> slots_;  // position -> slot
  std::vector<Bucket> table_;
  int shift_ = 64;  // 64 - log2(table_.size())
};

}  // namespace lepus
