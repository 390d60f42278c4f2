// What the registry-wide tests share: a silent warning sink, a row's declared defaults, and one case per
// (learner, loss) pair the learner accepts (its row's traits).
#pragma once
#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "formats/format.h"
#include "lepus/learner.h"

namespace lepus::registry_test {

class Quiet final : public WarningSink {
 public:
  void warn(const std::string&) override {}
};

// The options a learner gets when the command line names none of them: its declared defaults.
inline OptionValues defaults_of(const LearnerRow& row) {
  OptionValues v;
  for (const auto& s : row.options)
    if (s.kind != OptionSpec::Kind::kFlag && !s.default_value.empty()) v.set(s.name, s.default_value, false);
  return v;
}

struct Case {
  std::string learner, loss;
};
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.learner << "/" << c.loss; }

inline std::vector<Case> cases(std::vector<const char*> losses) {
  std::vector<Case> out;
  for (const auto& row : learner_registry())
    for (const char* loss : losses)
      if (row.accepts_loss(loss)) out.push_back({row.name, loss});
  return out;
}

// A test name: learner_loss with every other character as '_'.
inline std::string case_name(const Case& c) {
  std::string n = c.learner + "_" + c.loss;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace lepus::registry_test
