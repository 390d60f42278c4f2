// What every learner shares, written once: which examples teach, VW's clipping range, the float a score is
// reported as, the sparse slot-table format of model files, and numbers in describe() and readable models.
// A learner is its update rule plus these.
#pragma once
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/coords.h"
#include "core/zeroed_table.h"
#include "lepus/errors.h"
#include "lepus/example.h"
#include "lepus/learner.h"
#include "lepus/model_io.h"

namespace lepus::common {

// An example teaches when it has a label and a positive importance weight; any other is only predicted.
inline bool teaches(const Example& x) { return x.labeled && x.weight > 0.0f; }

// Numbers as text, two ways, one each: a figure shown to a person (describe(), the preamble, messages) has VW's 6
// significant digits; a learner's state in a readable model is exact (imbue_exact_numbers).
std::string number(double v, int precision = 6);

// From now on `out` writes each floating-point number in the shortest form that reads back to it (std::to_chars):
// a value that is exactly a float as the float (0.1f as 0.1), any other double in up to 17 digits; integers and
// the rest of the stream as before. --readable_model's lepus layout and the learners' own readable text use it.
void imbue_exact_numbers(std::ostream& out);

// VW's clipping range: the loss's initial range widened by every label seen, frozen under -t (and by sgd's
// --min_prediction/--max_prediction, whose fixed ends a model file does not override). Predictions are
// clipped to it; a learner's gradient is the loss's at the unclipped score.
class LabelClip {
 public:
  LabelClip(LabelRange initial, bool frozen, bool fixed_lo = false, bool fixed_hi = false)
      : range_(initial), frozen_(frozen), fixed_lo_(fixed_lo), fixed_hi_(fixed_hi) {}
  // Widens the range with x's label, if it has one (before predicting x, as VW does).
  void see(const Example& x) {
    if (!x.labeled || frozen_) return;
    range_.lo = std::min(range_.lo, x.label);
    range_.hi = std::max(range_.hi, x.label);
  }
  LabelRange range() const { return range_; }
  // Widens the range as see() would for labels lo and hi (--distributed: the labels other ranks saw).
  void widen(float lo, float hi) {
    if (frozen_) return;
    range_.lo = std::min(range_.lo, lo);
    range_.hi = std::max(range_.hi, hi);
  }
  float clip(float raw) const { return std::min(std::max(raw, range_.lo), range_.hi); }
  // The prediction of a raw score that is already a float.
  Prediction of(float raw) const { return Prediction{raw, clip(raw)}; }
  void save(ModelWriter& out) const;
  // Reads what save() wrote (a NaN end or lo > hi is a ModelFormatError naming `who`); fixed ends stay.
  void load(ModelReader& in, const std::string& who);
  // The "min_label" and "max_label" lines of a readable model.
  void write_readable(std::ostream& out) const;

 private:
  LabelRange range_;
  bool frozen_, fixed_lo_, fixed_hi_;
};

// --audit for a learner whose prediction is sum_i w_i x_i, each w_i from slot i's state alone (and from x_i itself
// where a learner clips by the largest |x_i| seen): the w_i feature f meets, found as the raw score of f alone
// less that of an empty example, over f's value.
inline SlotAudit probe_slot(const Learner& learner, const Feature& f, int group) {
  Example alone;
  alone.features.push_back(f);
  if (group >= 0) alone.groups.push_back(FeatureGroup{static_cast<unsigned char>(group), 0, 1});
  alone.num_linear = group >= 0 ? 1 : 0;
  alone.num_reported = 1;
  const Example empty;
  const float w = (learner.predict(alone).raw - learner.predict(empty).raw) / f.value;
  return SlotAudit{w, w, std::nullopt};
}

// A count that a const predict() adds to, possibly from several threads at once (a daemon's concurrent
// predictions): relaxed atomic increments (a run's metric, not an order between threads), copyable.
class Tally {
 public:
  Tally(uint64_t n = 0) : n_(n) {}  // NOLINT: a count converts from and to its number
  Tally(const Tally& o) : n_(o.get()) {}
  Tally& operator=(const Tally& o) {
    n_.store(o.get(), std::memory_order_relaxed);
    return *this;
  }
  Tally& operator+=(uint64_t d) {
    n_.fetch_add(d, std::memory_order_relaxed);
    return *this;
  }
  Tally& operator++() { return *this += 1; }
  uint64_t get() const { return n_.load(std::memory_order_relaxed); }
  operator uint64_t() const { return get(); }  // NOLINT

 private:
  std::atomic<uint64_t> n_;
};

// The calling thread's vector builder for `bits`: a const predict() that may run on several threads at once
// builds its example's vector here instead of in a member. Valid until this thread's next call; nothing that
// holds it may call another learner's predict().
VectorBuilder& thread_builder(int bits);

// A double score as the float the loss and the driver see: +-FLT_MAX beyond float's range and 0 for NaN,
// each counted in `safeguards` (a uint64_t or a Tally).
template <class Count>
float to_float(double s, Count& safeguards) {
  if (s > FLT_MAX || s < -FLT_MAX) {
    ++safeguards;
    return s > 0.0 ? FLT_MAX : -FLT_MAX;
  }
  if (std::isnan(s)) {
    ++safeguards;
    return 0.0f;
  }
  return static_cast<float>(s);
}

// ---- the sparse slot table of a model file ----
// Format: the table size (u64), the count of kept slots (u64), then per kept slot in increasing index order
// its index (u64) and its record. save_count_and_records / load_count_and_records are the part after the size
// (scinol-coord writes its stride in between). `each(f)` calls f(i) for every slot that may be kept, in
// increasing order: touched(table) visits only the pages a run touched (core/zeroed_table.h), so saving costs
// what the run touched, not 2^b.

// The slots of `table` that may be nonzero; with a stride of 2^shift entries per slot, slot i is entries
// [i << shift, (i + 1) << shift).
template <class T>
auto touched(const ZeroedTable<T>& table, unsigned shift = 0) {
  return [&table, shift](auto&& f) {
    uint64_t last = ~uint64_t{0};
    table.for_each_touched([&](size_t entry) {
      const uint64_t slot = entry >> shift;
      if (slot != last) f(slot);
      last = slot;
    });
  };
}

template <class Each, class Kept, class Put>
void save_count_and_records(ModelWriter& out, Each each, Kept kept, Put put) {
  uint64_t count = 0;
  each([&](uint64_t i) { count += kept(i) ? 1 : 0; });
  out.put_u64(count);
  each([&](uint64_t i) {
    if (!kept(i)) return;
    out.put_u64(i);
    put(i);
  });
}

template <class Each, class Kept, class Put>
void save_table(ModelWriter& out, uint64_t size, Each each, Kept kept, Put put) {
  out.put_u64(size);
  save_count_and_records(out, each, kept, put);
}

// Reads the count and records for a table of `size` slots, each record `record_bytes` long; get(i) reads
// slot i's record. The count is bounded by the bytes present before anything is read, and indices must
// increase. The caller clears its table first.
template <class Get>
void load_count_and_records(ModelReader& in, uint64_t size, uint64_t record_bytes, const std::string& who,
                            Get get) {
  const uint64_t count = in.get_u64((who + " slot count").c_str());
  if (count > size || count * (8 + record_bytes) > in.remaining())
    throw ModelFormatError(in.source() + ": " + who + " slot count " + std::to_string(count) +
                           " does not fit the file");
  const std::string index_what = who + " slot index";
  uint64_t last = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t i = in.get_u64(index_what.c_str());
    if (i >= size || (k > 0 && i <= last))
      throw ModelFormatError(in.source() + ": " + who + " slot index out of range or out of order");
    last = i;
    get(i);
  }
}

// Reads the table size, refusing any other than the learner's own.
inline void load_table_size(ModelReader& in, uint64_t size, const std::string& who) {
  const uint64_t got = in.get_u64((who + " table size").c_str());
  if (got != size)
    throw ModelFormatError(in.source() + ": " + who + " weight table has " + std::to_string(got) +
                           " slots, expected " + std::to_string(size));
}

template <class Slot>
bool all_zero(const Slot& s) {
  static const Slot kZero{};
  return std::memcmp(&s, &kZero, sizeof(Slot)) == 0;
}

// A table of slots made of doubles only, as the layouts before the declared state saved it (kept when any field
// is nonzero, stored raw): every field must be finite. What older_slots reads.
template <class Slot>
void load_slots(ModelReader& in, ZeroedTable<Slot>& slots, const std::string& who) {
  load_table_size(in, slots.size(), who);
  slots.clear();
  const std::string slot_what = who + " slot";
  load_count_and_records(in, slots.size(), sizeof(Slot), who, [&](uint64_t i) {
    in.get_raw(&slots[i], sizeof(Slot), slot_what.c_str());
    double fields[sizeof(Slot) / sizeof(double)];
    std::memcpy(fields, &slots[i], sizeof(Slot));
    for (double f : fields)
      if (!std::isfinite(f))
        throw ModelFormatError(in.source() + ": " + who + " state: non-finite value in slot " +
                               std::to_string(i));
  });
}

}  // namespace lepus::common
