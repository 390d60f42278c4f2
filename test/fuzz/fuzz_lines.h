// The driver of the line-parser targets (vw_text, libsvm, csv): two configuration bytes pick the parse and
// feature-space options, every following line is parsed, checked, expanded through a FeatureSpace and
// checked again. The space lives for the whole input, so the ':' wildcard sees namespaces accumulate.
#pragma once
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_space.h"
#include "formats/format.h"
#include "fuzz_common.h"

namespace lepus::fuzz {

// Interaction sets, picked by 4 bits. 'x', 'y', 'z' stand for the target's three most useful namespace
// bytes (its default namespace first), '\x80' is the constant's group, ':' the wildcard.
struct InteractionSet {
  std::vector<std::string> quadratic, cubic, interactions;
};

inline InteractionSet interaction_set(unsigned index, std::string_view letters) {
  static const InteractionSet kSets[16] = {
      {{}, {}, {}},
      {{"xx"}, {}, {}},
      {{"yz", "zy", "yy"}, {}, {}},
      {{"::"}, {}, {}},
      {{"x:"}, {}, {}},
      {{}, {"xxx"}, {}},
      {{"yz"}, {"xyz"}, {}},
      {{}, {"yyz"}, {"yzyz"}},
      {{}, {}, {"y::"}},
      {{}, {}, {"xxxx"}},
      {{"x\x80", "\x80\x80"}, {}, {}},
      {{}, {"::x"}, {}},
      {{" x", "  "}, {}, {}},
      {{}, {}, {"yzyzyzyzyzyzyzyzy"}},  // 17 terms: generates nothing
      {{}, {}, {"yyyyyyyyyyyyyyyy"}},   // 16 terms
      {{"xx", "yy"}, {"xxy"}, {"xy"}},
  };
  auto subst = [&](std::vector<std::string> list) {
    for (auto& s : list)
      for (auto& c : s) {
        if (c == 'x') c = letters[0];
        if (c == 'y') c = letters[1];
        if (c == 'z') c = letters[2];
      }
    return list;
  };
  const InteractionSet& s = kSets[index & 15];
  return {subst(s.quadratic), subst(s.cubic), subst(s.interactions)};
}

// Byte 0 (parse): bit 0 --hash all, bit 1 --hash_seed 42, bit 2 drops groups ' ' and letters[1],
// bit 3 --positive_label 1, bits 4-7 the interaction set.
inline ParseOptions parse_options(uint8_t b0, std::string_view letters) {
  ParseOptions p;
  p.hash_mode = (b0 & 1) ? HashMode::kAll : HashMode::kStrings;
  p.hash_seed = (b0 & 2) ? 42u : 0u;
  if (b0 & 4) {
    p.drop_group[static_cast<unsigned char>(' ')] = true;
    p.drop_group[static_cast<unsigned char>(letters[1])] = true;
  }
  if (b0 & 8) {
    p.has_positive_label = true;
    p.positive_label.assign(1, '1');  // not = "1": GCC 12 warns falsely (-Wrestrict) on that
  }
  return p;
}

// Byte 1 (feature space): bit 0 --noconstant, bit 1 --permutations, bit 2 --leave_duplicate_interactions,
// bit 3 --ignore_linear letters[0] and letters[2], bit 4 the plain --invariant norm.
inline FeatureSpaceOptions space_options(uint8_t b0, uint8_t b1, std::string_view letters) {
  FeatureSpaceOptions o;
  const InteractionSet set = interaction_set(b0 >> 4, letters);
  o.quadratic = set.quadratic;
  o.cubic = set.cubic;
  o.interactions = set.interactions;
  o.constant = !(b1 & 1);
  o.permutations = (b1 & 2) != 0;
  o.leave_duplicates = (b1 & 4) != 0;
  if (b1 & 8) {
    o.ignore_linear[static_cast<unsigned char>(letters[0])] = true;
    o.ignore_linear[static_cast<unsigned char>(letters[2])] = true;
  }
  o.invariant_norm = (b1 & 16) != 0;
  return o;
}

// An example is not expanded when it would generate more than this many interaction features (a line of
// 2,000 one-letter features under --cubic is legitimately huge; the parser, not the expansion, is fuzzed).
inline constexpr uint64_t kMaxInteractions = 100000;

// Expands a checked, parsed example and checks the result against the model in fuzz_common.h.
inline void expand_and_check(FeatureSpace& space, const FeatureSpaceOptions& o, const Example& parsed) {
  if (parsed.empty) return;
  // First a stand-in with one feature per group: it refreshes the wildcards exactly as `parsed` would
  // (refresh reads only the groups), so interactions() is then the list the real expansion uses.
  Example shape;
  for (const auto& g : parsed.groups) {
    const uint32_t at = static_cast<uint32_t>(shape.features.size());
    shape.features.push_back(Feature{parsed.features[g.begin].index, 1.0f});
    shape.groups.push_back(FeatureGroup{g.ns, at, at + 1});
  }
  shape.num_linear = static_cast<uint32_t>(shape.features.size());
  const Example shape_in = shape;
  try {
    space.expand(shape);
  } catch (const FeatureLimitError&) {  // more than --max_features: the driver's error naming the line
    return;
  }
  check_expanded(
      shape, shape_in.num_linear,
      expected_interactions(shape_in, space.interactions(), o.constant, o.permutations, ~0ull >> 1),
      o.constant, o.ignore_linear);

  const uint64_t want =
      expected_interactions(parsed, space.interactions(), o.constant, o.permutations, kMaxInteractions);
  if (want > kMaxInteractions) return;
  Example ex = parsed;
  space.expand(ex);
  check_expanded(ex, parsed.num_linear, want, o.constant, o.ignore_linear);
  // A sum of squares: never negative. It may be infinite or NaN: f32 x^2 overflows (1e21) or underflows
  // (1e-31) and VW's recurrence then multiplies inf by 0, as VW does; the learner's safeguard catches it
  // (crashes/libsvm/crash-821d945c..., crashes/README.md).
  if (o.invariant_norm) FUZZ_CHECK(!(ex.invariant_norm < 0.0f));
  // Expansion leaves label, weight, tag alone.
  FUZZ_CHECK(ex.tag == parsed.tag);
  FUZZ_CHECK(ex.labeled == parsed.labeled);
}

// Runs `parse(line, options, ex, sink)` on every line of `text` under the options of bytes b0 and b1.
template <typename Parse>
void run_lines(uint8_t b0, uint8_t b1, std::string_view text, std::string_view letters, Parse parse) {
  const ParseOptions p = parse_options(b0, letters);
  const FeatureSpaceOptions o = space_options(b0, b1, letters);
  std::unique_ptr<FeatureSpace> made;
  try {
    made = std::make_unique<FeatureSpace>(o);
  } catch (const ConfigError&) {  // an interaction of more than 16 namespaces is refused up front
    return;
  }
  FeatureSpace& space = *made;
  CountingSink sink;
  Example ex;
  for (std::string_view line : split_lines(text)) {
    // An exact-size heap copy, so AddressSanitizer sees any read past the line's end. Never a null pointer,
    // even for an empty line: the pipeline's lines always point into a block (see crashes/README.md).
    const std::unique_ptr<char[]> copy(new char[line.size()]);
    if (!line.empty()) std::memcpy(copy.get(), line.data(), line.size());
    parse(std::string_view(copy.get(), line.size()), p, ex, sink);
    check_parsed(ex, p);
    if (p.has_positive_label && ex.labeled) FUZZ_CHECK(ex.label == 1.0f || ex.label == -1.0f);
    expand_and_check(space, o, ex);
  }
}

// The common input layout: two option bytes, then the lines.
template <typename Parse>
void run_lines(const uint8_t* data, size_t size, std::string_view letters, Parse parse) {
  if (size < 2) return;
  run_lines(data[0], data[1], std::string_view(reinterpret_cast<const char*>(data + 2), size - 2), letters,
            parse);
}

}  // namespace lepus::fuzz
