// What VW users inspect a model with, in VW 9.11.2's formats: --audit (each example's features with their names,
// slots, values and weights, before the learner sees it), --invert_hash (the readable model with each slot's
// feature name) and --audit_regressor (a saved model's nonzero weights named by a pass over the data).
// Feature names exist only when one of these is asked for (ParseOptions::keep_names, FeatureSpaceOptions::
// keep_names); the ordinary path keeps none.
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "lepus/example.h"
#include "lepus/learner.h"

namespace lepus {

struct AuditOptions {
  bool audit = false;           // --audit: lines on stdout
  bool invert_hash = false;     // --invert_hash: remember each slot's first name (the cli writes the file)
  std::string audit_regressor;  // --audit_regressor FILE
  int bits = 18;
  bool test_only = false;
};

// A feature's name as VW's audit prints it: its terms joined by '*', each "ns^name" ("name" in the default
// namespace), "^str" added for a string value; empty terms left out.
std::string audit_name(const FeatureName& name);
// The same as --audit_regressor writes it: terms without a name are left out and string values are not shown.
std::string regressor_name(const FeatureName& name);

class Auditor {
 public:
  // log: the run's stderr (nullptr under --quiet). Opens the --audit_regressor file (IoError on failure); with
  // --audit_regressor, throws ConfigError when the learner has no nonzero weight to audit.
  Auditor(const AuditOptions& options, const Learner& learner, std::ostream* log);
  ~Auditor();
  // Before the learner sees ex (expanded): its audit line with the weights it meets, the names of its slots
  // (--invert_hash: the first pass, or a -t run), and --audit_regressor's lines. first_pass: the run's first pass.
  void before(const Example& ex, bool first_pass);
  // After: --audit's prediction line (the learner's clipped prediction and the tag), then the feature line.
  void after(float prediction, const std::string& tag);
  // --audit_regressor: every nonzero weight has been written (the run may stop reading).
  bool regressor_done() const { return regressor_ && audited_ == nonzero_; }
  // --audit_regressor's closing note, when some weights were not found in the data; "" otherwise.
  std::string finish();
  // --invert_hash: each slot's name, slot = index mod 2^bits.
  const std::unordered_map<uint64_t, FeatureName>& slot_names() const { return names_; }

 private:
  void regressor_row(uint64_t example, uint64_t percent);

  AuditOptions opt_;
  const Learner& learner_;
  std::ostream* log_;
  uint64_t mask_;
  const AuditsSlots* slots_ = nullptr;  // the learner, when it has a weight per slot
  bool per_slot_ = false;               // slots_ != nullptr
  std::string line_;                    // the pending --audit feature line
  std::unordered_map<uint64_t, FeatureName> names_;
  // --audit_regressor.
  std::unique_ptr<std::ofstream> regressor_;
  std::vector<bool> written_;  // slots already written
  uint64_t nonzero_ = 0, audited_ = 0, examples_ = 0;
  double next_row_ = 1.0;
  bool last_row_shown_ = false;
};

}  // namespace lepus
