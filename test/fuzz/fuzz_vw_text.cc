// Fuzz target: the VW text parser (formats/vw_text.h) on every line, then the feature space (-q, --cubic,
// --interactions, ':' wildcards, --ignore_linear, --noconstant). Input: two option bytes (fuzz_lines.h), then
// VW text lines.
#include <cstddef>
#include <cstdint>

#include "formats/vw_text.h"
#include "fuzz_lines.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lepus::fuzz::run_lines(data, size, "fab",
                         [](std::string_view line, const lepus::ParseOptions& p, lepus::Example& ex,
                            lepus::WarningSink& sink) { lepus::parse_vw_line(line, p, ex, sink); });
  return 0;
}
