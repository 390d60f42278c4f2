// A learner's weight table: 2^b slots of a trivially copyable type, all zero at first, that costs memory only
// for the pages a run writes. The table is an anonymous private mapping (mmap), whose pages the kernel fills
// with zeros on first touch, as VW's calloc'd table does: at -b 28 a run that touches 10,000 slots holds
// ~40 MB, not the 4 GiB of the whole table. Reading an untouched page maps the kernel's shared zero page,
// which costs no memory either, so saving a model (a scan for nonzero slots) stays within what was touched.
// Some kernels back even a read of an untouched page with a fresh page, so scans (saving a model, writing a
// readable one) visit only the pages the run touched: for_each_touched asks the kernel which pages those are.
// Transparent huge pages are declined for tables larger than kHugePageLimit, where one written slot would
// pull in 2 MiB. Below it they are asked for only when the run says its tables will be touched densely
// (set_dense_tables: examples with interactions touch all of -b 18's 4 MiB), where faulting 4 KiB pages costs
// more CPU than the huge pages cost memory; otherwise a sparse run would hold up to 2 MiB for one slot.
// clear() hands every page back to the kernel instead of writing zeros over them.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>

namespace lepus {

// Whether tables mapped from now on expect to be touched densely (see above); off unless a caller says so.
void set_dense_tables(bool dense);

namespace detail {
inline constexpr size_t kHugePageLimit = size_t{8} << 20;  // bytes: larger tables use 4 KiB pages only
inline constexpr size_t kScanAllBelow = size_t{1} << 20;   // bytes: smaller tables are scanned whole
// Reserves `bytes` of zero-filled address space; throws std::bad_alloc when the mapping fails.
void* map_zeroed(size_t bytes);
void unmap_zeroed(void* p, size_t bytes);
// Makes every byte zero again and releases the pages to the kernel.
void rezero(void* p, size_t bytes);
// Calls f(begin, end) for each run of bytes of [p, p + bytes) on pages that were touched (written, read or
// swapped out), in increasing order; bytes outside every run are zero. Where the kernel cannot say (or the
// range is small), one run: everything.
void touched_runs(const void* p, size_t bytes, const std::function<void(size_t, size_t)>& f);
}  // namespace detail

template <class T>
class ZeroedTable {
  static_assert(std::is_trivially_copyable_v<T>, "a table slot is a plain record");

 public:
  ZeroedTable() = default;
  explicit ZeroedTable(size_t n)
      : n_(n), p_(n ? static_cast<T*>(detail::map_zeroed(n * sizeof(T))) : nullptr) {}
  ~ZeroedTable() { release(); }
  // A copy costs the pages the original touched.
  ZeroedTable(const ZeroedTable& o) : ZeroedTable(o.n_) { copy_touched(o); }
  ZeroedTable& operator=(const ZeroedTable& o) {
    if (this != &o) {
      ZeroedTable copy(o);
      swap(copy);
    }
    return *this;
  }
  ZeroedTable(ZeroedTable&& o) noexcept : n_(std::exchange(o.n_, 0)), p_(std::exchange(o.p_, nullptr)) {}
  ZeroedTable& operator=(ZeroedTable&& o) noexcept {
    if (this != &o) {
      release();
      n_ = std::exchange(o.n_, 0);
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  // Every slot back to all-zero bytes (value-initialised for the arithmetic types and records of them).
  void clear() {
    if (p_) detail::rezero(p_, n_ * sizeof(T));
  }
  // Calls f(i) for every slot that may be nonzero, in increasing order (the slots on touched pages; a slot
  // elsewhere is all zero bytes). Scans that skip zero slots anyway (saving, readable models) use this so
  // that they cost what the run touched, not 2^b.
  template <class F>
  void for_each_touched(F&& f) const {
    size_t next = 0;
    detail::touched_runs(p_, n_ * sizeof(T), [&](size_t b, size_t e) {
      const size_t last = std::min(n_, (e + sizeof(T) - 1) / sizeof(T));
      for (size_t i = std::max(next, b / sizeof(T)); i < last; ++i) f(i);
      next = std::max(next, last);
    });
  }
  void swap(ZeroedTable& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
  }

 private:
  void copy_touched(const ZeroedTable& o) {
    detail::touched_runs(o.p_, o.n_ * sizeof(T), [&](size_t b, size_t e) {
      std::memcpy(reinterpret_cast<char*>(p_) + b, reinterpret_cast<const char*>(o.p_) + b, e - b);
    });
  }
  void release() {
    if (p_) detail::unmap_zeroed(p_, n_ * sizeof(T));
    p_ = nullptr;
    n_ = 0;
  }
  size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace lepus
