// Fuzz target: the VW text parser (formats/vw_text.h) on every line, then the feature space (-q, --cubic,
// --interactions, ':' wildcards, --ignore_linear, --noconstant). Input: two option bytes (fuzz_lines.h), then
// VW text lines. Every line is also read by parse_vw_line_general, which must give the same example and the
// same warnings: the whole-feature fast paths are held to the general grammar.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/vw_text.h"
#include "fuzz_lines.h"

namespace {

class KeepingSink final : public lepus::WarningSink {
 public:
  void warn(const std::string& message) override { messages.push_back(message); }
  std::vector<std::string> messages;
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same(const lepus::Example& a, const lepus::Example& b) {
  FUZZ_CHECK(a.empty == b.empty);
  FUZZ_CHECK(a.labeled == b.labeled);
  FUZZ_CHECK(same_bits(a.label, b.label));
  FUZZ_CHECK(same_bits(a.weight, b.weight));
  FUZZ_CHECK(same_bits(a.initial, b.initial));
  FUZZ_CHECK(a.tag == b.tag);
  FUZZ_CHECK(a.num_linear == b.num_linear);
  FUZZ_CHECK(a.features.size() == b.features.size());
  for (size_t i = 0; i < a.features.size(); ++i) {
    FUZZ_CHECK(a.features[i].index == b.features[i].index);
    FUZZ_CHECK(same_bits(a.features[i].value, b.features[i].value));
  }
  FUZZ_CHECK(a.groups.size() == b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    FUZZ_CHECK(a.groups[i].ns == b.groups[i].ns);
    FUZZ_CHECK(a.groups[i].begin == b.groups[i].begin && a.groups[i].end == b.groups[i].end);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lepus::Example general;
  lepus::fuzz::run_lines(data, size, "fab",
                         [&general](std::string_view line, const lepus::ParseOptions& p, lepus::Example& ex,
                                    lepus::WarningSink& sink) {
                           KeepingSink fast_warnings;
                           KeepingSink general_warnings;
                           lepus::parse_vw_line(line, p, ex, fast_warnings);
                           lepus::parse_vw_line_general(line, p, general, general_warnings);
                           check_same(ex, general);
                           FUZZ_CHECK(fast_warnings.messages == general_warnings.messages);
                           for (const std::string& m : fast_warnings.messages) sink.warn(m);
                         });
  return 0;
}
