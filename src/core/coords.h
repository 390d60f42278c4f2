// One way from an example to a vector, for every learner that does not need VW's per-feature order (sgd keeps
// it for parity): the features' slots masked to 2^b, repeated slots (a feature twice, hash collisions, an
// interaction equal to a linear feature) summed into one coordinate, zero and non-finite values dropped and
// counted, in the order each slot first appears or sorted by slot, with the squared norm.
#pragma once
#include <cstdint>
#include <vector>

#include "lepus/example.h"

namespace lepus {

struct SparseVector {
  std::vector<uint64_t> slots;  // distinct, masked
  std::vector<double> values;   // finite and nonzero, summed in double in example order
  double norm2 = 0.0;           // sum of values^2
  uint64_t dropped = 0;         // features dropped for a non-finite value (this example)
  size_t size() const { return slots.size(); }
};

class VectorBuilder {
 public:
  enum class Order { kFirstSeen, kSlot };
  explicit VectorBuilder(int bits) : mask_((uint64_t{1} << bits) - 1) {}
  // The example's vector; valid until the next call. A coordinate whose features sum to 0 is dropped too.
  const SparseVector& build(const Example& ex, Order order = Order::kFirstSeen);

 private:
  uint64_t mask_;
  SparseVector v_;
  std::vector<uint32_t> table_;  // open addressing: position + 1 of a slot in v_, 0 = empty
};

}  // namespace lepus
