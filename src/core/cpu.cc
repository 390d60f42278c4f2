#include "core/cpu.h"

namespace lepus {

bool has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  // __builtin_cpu_init first: a static initializer may call this before libgcc's own CPU detection ran.
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
#else
  return false;
#endif
}

}  // namespace lepus
