#include "core/zeroed_table.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <vector>

namespace lepus {
namespace {
std::atomic<bool> dense_tables{false};
}  // namespace

void set_dense_tables(bool dense) { dense_tables.store(dense, std::memory_order_relaxed); }

namespace detail {

void* map_zeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // A huge page would make one written slot cost 2 MiB, so large tables decline them. Small tables (-b 18's 4
  // MiB for sgd) that a run touches densely ask for them: this VM takes ~14 us of CPU per 4 KiB page fault,
  // 14 ms for the 1,024 pages of a 4 MiB table (3% of rcv1x20 -q ff's learner thread), against 0.3 ms for its
  // two huge pages. Without interactions rcv1 leaves part of the table untouched, and huge pages cost it 1.1
  // MiB of peak memory, so they are not asked for then. A table below 2 MiB cannot hold one; where the kernel
  // has none free it falls back to 4 KiB pages.
  if (bytes > kHugePageLimit)
    madvise(p, bytes, MADV_NOHUGEPAGE);
  else if (dense_tables.load(std::memory_order_relaxed))
    madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void unmap_zeroed(void* p, size_t bytes) { munmap(p, bytes); }

void rezero(void* p, size_t bytes) {
  // MADV_DONTNEED on a private anonymous mapping: the pages are dropped and read back as zeros.
  if (madvise(p, bytes, MADV_DONTNEED) != 0) std::memset(p, 0, bytes);
}

void touched_runs(const void* p, size_t bytes, const std::function<void(size_t, size_t)>& f) {
  if (bytes == 0) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  const int fd =
      bytes < kScanAllBelow || page_size <= 0 ? -1 : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {  // small table, or no way to ask: every slot may be nonzero
    f(0, bytes);
    return;
  }
  // /proc/self/pagemap: one u64 per virtual page; bit 63 = present in memory, bit 62 = swapped out. A page
  // that is neither was never touched and reads as zeros. (The kernel's own documentation:
  // admin-guide/mm/pagemap.)
  const auto page = static_cast<size_t>(page_size);
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const size_t first_page = start / page, pages = (start + bytes - 1) / page - first_page + 1;
  constexpr size_t kChunk = 8192;  // entries read at a time (64 KiB)
  std::vector<uint64_t> entry(kChunk);
  size_t run_begin = 0;
  bool in_run = false;
  auto byte_at = [&](size_t k) {  // offset into [p, p + bytes) of page k's first byte, clamped
    const uintptr_t a = (first_page + k) * page;
    return a <= start ? size_t{0} : std::min(bytes, static_cast<size_t>(a - start));
  };
  for (size_t k0 = 0; k0 < pages; k0 += kChunk) {
    const size_t n = std::min(kChunk, pages - k0);
    const ssize_t want = static_cast<ssize_t>(n * sizeof(uint64_t));
    if (pread(fd, entry.data(), n * sizeof(uint64_t),
              static_cast<off_t>((first_page + k0) * sizeof(uint64_t))) !=
        want) {  // the kernel refused part way: report the rest as touched
      close(fd);
      f(in_run ? run_begin : byte_at(k0), bytes);
      return;
    }
    for (size_t j = 0; j < n; ++j) {
      const bool touched = (entry[j] >> 62) != 0;
      if (touched && !in_run) {
        run_begin = byte_at(k0 + j);
        in_run = true;
      } else if (!touched && in_run) {
        f(run_begin, byte_at(k0 + j));
        in_run = false;
      }
    }
  }
  close(fd);
  if (in_run) f(run_begin, bytes);
}

}  // namespace detail
}  // namespace lepus
