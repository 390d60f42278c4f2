#include "core/zeroed_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

namespace lepus {
namespace {

struct Slot {
  float w, g, n, r;
};

// This process's resident memory in KiB (VmRSS), or -1 where /proc does not say.
long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = -1;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

bool kernel_says_which_pages() { return access("/proc/self/pagemap", R_OK) == 0; }

// The VmFlags of the mapping that holds p in /proc/self/smaps ("hg": huge pages asked for, "nh": declined),
// or
// "?" where /proc does not say.
std::string vm_flags(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    if (std::sscanf(line.c_str(), "%lx%c%lx", &lo, &dash, &hi) == 3 && dash == '-') {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "?";
}

TEST(ZeroedTable, StartsZeroAndClearsToZero) {
  ZeroedTable<Slot> t(size_t{1} << 16);
  ASSERT_EQ(t.size(), size_t{1} << 16);
  for (size_t i = 0; i < t.size(); i += 97) EXPECT_EQ(t[i].w, 0.0f);
  t[5].w = 1.5f;
  t[60000].r = -2.0f;
  EXPECT_EQ(t[5].w, 1.5f);
  t.clear();
  EXPECT_EQ(t[5].w, 0.0f);
  EXPECT_EQ(t[60000].r, 0.0f);
  t[7].g = 3.0f;  // still writable after clear()
  EXPECT_EQ(t[7].g, 3.0f);
}

// Every slot that was written is visited, in increasing order and once; on a large table only the pages
// written are (a few pages' worth of slots, not 2^24).
TEST(ZeroedTable, VisitsTheTouchedSlotsOnly) {
  ZeroedTable<Slot> t(size_t{1} << 24);  // 256 MiB of address space
  const std::set<size_t> written = {3, 4096, 4097, 1'000'000, (size_t{1} << 24) - 1};
  for (size_t i : written) t[i].w = static_cast<float>(i + 1);
  std::set<size_t> nonzero;
  size_t visited = 0, last = 0;
  t.for_each_touched([&](size_t i) {
    EXPECT_TRUE(visited == 0 || i > last) << "order";
    last = i;
    ++visited;
    if (t[i].w != 0.0f) nonzero.insert(i);
  });
  EXPECT_EQ(nonzero, written);
  if (!kernel_says_which_pages()) GTEST_SKIP() << "no /proc/self/pagemap: every slot is visited";
  const size_t per_page = static_cast<size_t>(sysconf(_SC_PAGESIZE)) / sizeof(Slot);
  EXPECT_LE(visited, 5 * per_page);  // 4 pages hold the 5 slots (3; 4096 and 4097; 1e6; the last)
}

// A small table is scanned whole (asking the kernel would cost more than looking).
TEST(ZeroedTable, SmallTablesAreScannedWhole) {
  ZeroedTable<double> t(1000);
  t[999] = 2.0;
  size_t visited = 0;
  t.for_each_touched([&](size_t) { ++visited; });
  EXPECT_EQ(visited, 1000u);
}

// The point of the table: 2^28 slots of 16 bytes (4 GiB of address space) cost what is written.
TEST(ZeroedTable, CostsOnlyThePagesWritten) {
  const long before = resident_kib();
  if (before < 0) GTEST_SKIP() << "no VmRSS in /proc/self/status";
  {
    ZeroedTable<Slot> t(size_t{1} << 28);
    for (size_t i = 0; i < 1000; ++i) t[i * 262'139].w = 1.0f;  // 1,000 scattered slots: ~1,000 pages
    size_t nonzero = 0;
    t.for_each_touched([&](size_t i) { nonzero += t[i].w != 0.0f; });  // a save's scan
    EXPECT_EQ(nonzero, 1000u);
    const ZeroedTable<Slot> copy(t);  // a copy costs the same pages again
    EXPECT_EQ(copy[999 * size_t{262'139}].w, 1.0f);
    EXPECT_EQ(copy[1].w, 0.0f);
    const long grown = resident_kib() - before;
    EXPECT_LT(grown, 64 * 1024) << "KiB resident after writing 1,000 slots of a 4 GiB table and copying it";
  }
}

TEST(ZeroedTable, MovesAndSwaps) {
  ZeroedTable<float> a(100), b;
  a[10] = 4.0f;
  b = std::move(a);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(b[10], 4.0f);
  EXPECT_TRUE(a.empty());
  ZeroedTable<float> c(3);
  c.swap(b);
  EXPECT_EQ(c[10], 4.0f);
  EXPECT_EQ(b.size(), 3u);
  ZeroedTable<float> d;
  d = c;
  EXPECT_EQ(d[10], 4.0f);
  d[10] = 1.0f;
  EXPECT_EQ(c[10], 4.0f);  // a copy, not a view
}

// Huge pages are asked for only by small tables of a run that says it touches them densely (interactions),
// and never by large ones: without the switch, a sparse run held up to 2 MiB for each slot it wrote.
TEST(ZeroedTable, AsksForHugePagesOnlyWhenTouchedDensely) {
  const ZeroedTable<Slot> sparse(size_t{1} << 18);  // 4 MiB
  if (vm_flags(sparse.data()) == "?") GTEST_SKIP() << "/proc/self/smaps does not say";
  EXPECT_EQ(vm_flags(sparse.data()).find(" hg "), std::string::npos) << vm_flags(sparse.data());
  set_dense_tables(true);
  const ZeroedTable<Slot> dense(size_t{1} << 18);
  const ZeroedTable<Slot> large(size_t{1} << 22);  // 64 MiB
  set_dense_tables(false);
  EXPECT_NE(vm_flags(dense.data()).find(" hg "), std::string::npos) << vm_flags(dense.data());
  EXPECT_NE(vm_flags(large.data()).find(" nh "), std::string::npos) << vm_flags(large.data());
  EXPECT_EQ(vm_flags(large.data()).find(" hg "), std::string::npos) << vm_flags(large.data());
}

}  // namespace
}  // namespace lepus
