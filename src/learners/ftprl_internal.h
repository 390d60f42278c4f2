// Internals shared by the FTPRL learners' .cc files (not a contract): the score loop, the hot-loop constants
// and the slot table's save/load.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "learners/ftprl.h"
#include "lepus/errors.h"

namespace lepus::ftprl {

// Slots are touched in hash order, i.e. at random: fetch the slot this many features ahead (as
// src/learners/gd.cc).
inline constexpr size_t kPrefetch = 12;

// A feature value the score can use: non-finite values (an interaction of two huge values overflowing float)
// are treated as absent, as sgd does.
inline double usable(float v) { return std::isfinite(v) ? static_cast<double>(v) : 0.0; }

// Branch-free (minsd/maxsd): whether u lies outside the box is data-dependent and a branch would mispredict.
inline double clip(double u, double r) { return std::min(std::max(u, -r), r); }

}  // namespace lepus::ftprl

namespace lepus {

template <class Slot>
double FtprlBase::clipped_score(const std::vector<Slot>& table, const Example& x) const {
  const Slot* slots = table.data();
  const Feature* fs = x.features.data();
  const size_t n = x.features.size();
  const double r = radius_;
  double s = x.initial;
  for (size_t i = 0; i < n; ++i) {
    if (i + ftprl::kPrefetch < n) __builtin_prefetch(&slots[fs[i + ftprl::kPrefetch].index & mask_]);
    s += ftprl::clip(slots[fs[i].index & mask_].u, r) * ftprl::usable(fs[i].value);
  }
  return s;
}

}  // namespace lepus

namespace lepus::ftprl {

inline std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

// Throws ModelFormatError unless v is finite (and > 0 when `positive`).
double checked(double v, const ModelReader& in, const char* what, bool positive = false);

template <class Slot>
bool is_zero(const Slot& s) {
  static const Slot kZero{};
  return std::memcmp(&s, &kZero, sizeof(Slot)) == 0;
}

// The table as its size, the count of slots with any nonzero field, then (index, raw slot) for each of them.
template <class Slot>
void save_slots(ModelWriter& out, const std::vector<Slot>& slots) {
  out.put_u64(slots.size());
  uint64_t nonzero = 0;
  for (const Slot& s : slots) nonzero += !is_zero(s);
  out.put_u64(nonzero);
  for (uint64_t i = 0; i < slots.size(); ++i) {
    if (is_zero(slots[i])) continue;
    out.put_u64(i);
    static_assert(sizeof(Slot) % sizeof(double) == 0);  // every slot is doubles
    out.put_values(reinterpret_cast<const double*>(&slots[i]), sizeof(Slot) / sizeof(double));
  }
}

// Reads what save_slots wrote into a table of the learner's own size; every field must be finite.
template <class Slot>
void load_slots(ModelReader& in, std::vector<Slot>& slots, const char* who) {
  const std::string w = who;
  const uint64_t size = in.get_u64("ftprl table size");
  if (size != slots.size())
    throw ModelFormatError(in.source() + ": " + w + " weight table has " + std::to_string(size) +
                           " slots, expected " + std::to_string(slots.size()));
  const uint64_t nonzero = in.get_u64("ftprl slot count");
  if (nonzero > size || nonzero * (8 + sizeof(Slot)) > in.remaining())
    throw ModelFormatError(in.source() + ": " + w + " slot count " + std::to_string(nonzero) +
                           " does not fit the file");
  std::fill(slots.begin(), slots.end(), Slot{});
  for (uint64_t k = 0; k < nonzero; ++k) {
    const uint64_t i = in.get_u64("ftprl slot index");
    if (i >= size) throw ModelFormatError(in.source() + ": " + w + " slot index out of range");
    in.get_raw(&slots[i], sizeof(Slot), "ftprl slot");
    static_assert(sizeof(Slot) % sizeof(double) == 0);
    double fields[sizeof(Slot) / sizeof(double)];
    std::memcpy(fields, &slots[i], sizeof(Slot));
    for (double f : fields) checked(f, in, "slot field");
  }
}

}  // namespace lepus::ftprl
