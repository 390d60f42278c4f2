#include "sketch/compact_index.h"

#include <bit>
#include <stdexcept>

namespace lepus {

uint32_t CompactIndex::insert(uint64_t slot) {
  const uint32_t found = find(slot);
  if (found != kNone) return found;
  if (slots_.size() >= kNone - 1) throw std::length_error("CompactIndex: more than 2^32 - 2 slots");
  if (2 * (slots_.size() + 1) > table_.size()) rehash(table_.empty() ? 16 : 2 * table_.size());
  const uint32_t position = static_cast<uint32_t>(slots_.size());
  slots_.push_back(slot);
  const size_t mask = table_.size() - 1;
  size_t i = bucket(slot);
  while (table_[i].position != 0) i = (i + 1) & mask;
  table_[i] = {slot, position + 1};
  return position;
}

void CompactIndex::rehash(size_t buckets) {
  table_.assign(buckets, Bucket{0, 0});
  shift_ = 64 - std::countr_zero(buckets);
  const size_t mask = buckets - 1;
  for (size_t p = 0; p < slots_.size(); ++p) {
    size_t i = bucket(slots_[p]);
    while (table_[i].position != 0) i = (i + 1) & mask;
    table_[i] = {slots_[p], static_cast<uint32_t>(p + 1)};
  }
}

void CompactIndex::clear() {
  slots_.clear();
  table_.clear();
  shift_ = 64;
}

}  // namespace lepus
