// Internals shared by the FTPRL learners' .cc files (not a contract): the score loop, the hot-loop constants
// and number checks on load.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
double FtprlBase::clipped_score(const ZeroedTable<Slot>& table, const Example& x) const {
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

inline std::string num(double v) { return common::number(v, 10); }

// Throws ModelFormatError unless v is finite (and > 0 when `positive`).
double checked(double v, const ModelReader& in, const char* what, bool positive = false);

}  // namespace lepus::ftprl
