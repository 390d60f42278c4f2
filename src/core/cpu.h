// What this CPU can run, decided once per process. Kernels with an AVX2 version check has_avx2() and fall back to
// their portable loop (which gives the same results) when it is false.
#pragma once

namespace lepus {

// True when the CPU runs AVX2 (x86-64 with GCC or Clang); false elsewhere.
bool has_avx2();

}  // namespace lepus
