// Fuzz target: VW's number reader (formats/float_reader.h). Reads one number at the start of the input and
// after every separator (space, TAB, '\n', ':', '|': where the parsers call it), from an exact-size heap
// buffer so AddressSanitizer catches a read outside [begin, end); checks the stop pointer and determinism, and
// that read_vw_float_fast, wherever it answers, answers exactly as read_vw_float does.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "formats/float_reader.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // new char[0] is a real (non-null) pointer, unlike an empty vector's data().
  const std::unique_ptr<char[]> buf(new char[size]);
  if (size > 0) std::memcpy(buf.get(), data, size);
  const char* const begin = buf.get();
  const char* const end = begin + size;
  for (const char* p = begin; p <= end; ++p) {
    if (p != begin && std::memchr(" \t\n:|", p[-1], 5) == nullptr) continue;
    const char* stop = nullptr;
    const float v = lepus::read_vw_float(p, end, &stop);
    FUZZ_CHECK(stop != nullptr && stop >= p && stop <= end);
    if (stop == p) FUZZ_CHECK(v == 0.0f);
    const char* stop2 = nullptr;
    const float v2 = lepus::read_vw_float(p, end, &stop2);
    FUZZ_CHECK(stop2 == stop);
    FUZZ_CHECK(std::memcmp(&v, &v2, sizeof v) == 0 || (std::isnan(v) && std::isnan(v2)));
    float fast = 0.0f;
    if (const char* fast_stop = lepus::read_vw_float_fast(p, end, &fast)) {
      FUZZ_CHECK(fast_stop == stop);
      FUZZ_CHECK(std::memcmp(&fast, &v, sizeof v) == 0);
    }
  }
  return 0;
}
