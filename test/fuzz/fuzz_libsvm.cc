// Fuzz target: the libsvm/svmlight parser (formats/libsvm.h) on every line, then the feature space. Input:
// two option bytes (fuzz_lines.h; bit 5 of the second puts the features in namespace "a" instead of "f"),
// then libsvm lines.
#include <cstddef>
#include <cstdint>

#include "formats/libsvm.h"
#include "fuzz_lines.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool other_ns = size >= 2 && (data[1] & 32) != 0;
  lepus::fuzz::run_lines(
      data, size, other_ns ? "abf" : "fab",
      [other_ns](std::string_view line, lepus::ParseOptions p, lepus::Example& ex, lepus::WarningSink& sink) {
        if (other_ns) p.libsvm_namespace = "abc";
        lepus::parse_libsvm_line(line, p, ex, sink);
        for (const auto& g : ex.groups) FUZZ_CHECK(g.ns == (other_ns ? 'a' : 'f'));
      });
  return 0;
}
