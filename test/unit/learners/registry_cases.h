// What the registry-wide tests share: a silent warning sink, a row's declared defaults, its option variants
// (derived from its declared OptionSpecs), and one case per (learner, loss, variant) for every loss the
// learner accepts (its row's traits). A learner added to the registry, or an option with choices or a flag
// added to a row, is covered without touching the tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "formats/format.h"
#include "lepus/learner.h"
#include "lepus/model_io.h"

namespace lepus::registry_test {

class Quiet final : public WarningSink {
 public:
  void warn(const std::string&) override {}
};

// A learner's saved state, its bytes.
inline std::vector<uint8_t> saved_state(const Learner& l) {
  ModelWriter w;
  l.save(w);
  return w.bytes();
}

// A refused state changes nothing: about `cuts` prefixes of `bytes` loaded into l in turn (as a predict-only
// state when `predict_only`), each refused, and l saves the same whole state after each as before.
inline void expect_cut_states_change_nothing(Learner& l, const std::vector<uint8_t>& bytes, size_t cuts,
                                             bool predict_only = false) {
  const auto before = saved_state(l);
  for (size_t n = 0; n < bytes.size(); n += std::max<size_t>(1, bytes.size() / cuts)) {
    ModelReader cut(bytes.data(), n, "cut");
    EXPECT_THROW(predict_only ? load_for_prediction(l, cut) : l.load(cut), ModelFormatError)
        << "cut at " << n << " of " << bytes.size();
    ASSERT_EQ(saved_state(l), before)
        << "a state cut at " << n << " of " << bytes.size() << " changed the learner";
  }
}

// The options a learner gets when the command line names none of them: its declared defaults.
inline OptionValues defaults_of(const LearnerRow& row) {
  OptionValues v;
  for (const auto& s : row.options)
    if (s.kind != OptionSpec::Kind::kFlag && !s.default_value.empty()) v.set(s.name, s.default_value, false);
  return v;
}

// One way of running a row: its defaults (option empty), or its defaults with one option given: a choice
// other than the default of an option with `choices` (value), or a flag set alone (value empty).
struct Variant {
  std::string option, value;
};

// The row's variants, derived from its declared options: the defaults; each non-default choice of each option
// with choices; each mode value of a number option; each flag set alone.
inline std::vector<Variant> variants_of(const LearnerRow& row) {
  std::vector<Variant> out{Variant{}};
  for (const auto& s : row.options) {
    if (s.kind == OptionSpec::Kind::kFlag) {
      out.push_back({s.name, ""});
      continue;
    }
    for (const auto& choice : s.choices)
      if (choice != s.default_value) out.push_back({s.name, choice});
    for (const auto& mode : s.modes) out.push_back({s.name, mode});
  }
  return out;
}

// The options of a row run as `variant`: its defaults with the variant's option given.
inline OptionValues options_of(const LearnerRow& row, const Variant& variant) {
  OptionValues v = defaults_of(row);
  if (!variant.option.empty()) v.set(variant.option, variant.value.empty() ? "1" : variant.value, true);
  return v;
}

struct Case {
  std::string learner, loss;
  Variant variant;  // option empty: the row's defaults
};
inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.learner << "/" << c.loss;
  if (c.variant.option.empty()) return;
  *os << "/--" << c.variant.option;
  if (!c.variant.value.empty()) *os << " " << c.variant.value;
}

// One case per (learner, loss) pair the learner accepts, with its defaults only, or (with_variants) once per
// variant of its row.
inline std::vector<Case> cases(std::vector<const char*> losses, bool with_variants = false) {
  std::vector<Case> out;
  for (const auto& row : learner_registry())
    for (const char* loss : losses) {
      if (!row.accepts_loss(loss)) continue;
      if (!with_variants) {
        out.push_back({row.name, loss, {}});
        continue;
      }
      for (const auto& v : variants_of(row)) out.push_back({row.name, loss, v});
    }
  return out;
}

// A test name: learner_loss, then _option[_value] for a variant, with every other character as '_'.
inline std::string case_name(const Case& c) {
  std::string n = c.learner + "_" + c.loss;
  if (!c.variant.option.empty()) n += "_" + c.variant.option;
  if (!c.variant.value.empty()) n += "_" + c.variant.value;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace lepus::registry_test
