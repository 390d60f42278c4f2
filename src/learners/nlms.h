// nlms: normalized least mean squares, the first-order baseline of online regression (Bershad 1986, "Analysis of
// the normalized LMS algorithm with Gaussian inputs", IEEE Trans. ASSP 34(4); compared against in Chapter 7 of
// the thesis "New min-max algorithms and analysis for online regression", which names it without a formula):
//
//     ŷ_t = <w, x_t>,    w += μ (y_t - ŷ_t) x_t / (ε + ‖x_t‖²),    0 < μ < 2, ε >= 0.
//
// With μ = 1 and ε = 0 the step projects w onto {w : <w, x_t> = y_t}; with ε = 0 it is unchanged by scaling x.
// Squared loss only. Over lepus's hashed slots x_t is the example's vector (core/coords.h: repeated slots
// summed). Choices of lepus's own, documented in docs/algorithms/nlms.md:
//   - ε: --nlms_eps, or by default 1e-6 times the average ‖x‖² of the examples learned so far (estimated online
//     and saved in the model), so the default does not depend on the data's scale;
//   - an importance weight k acts as k repetitions of the example when ε is 0: the residual shrinks by
//     (1 - μ)^k, so the step uses μ_k = 1 - (1 - μ)^k (k = 1: μ; k = 0: no step).
#pragma once
#include <optional>
#include <vector>

#include "core/coords.h"
#include "core/zeroed_table.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"

namespace lepus {

struct NlmsOptions {
  double mu = 1.0;
  std::optional<double> eps;                            // nullopt: 1e-6 x the running average of ||x||^2
  static NlmsOptions from(const OptionValues& values);  // throws ConfigError
};

class NlmsLearner final : public Learner, public AuditsSlots {
 public:
  NlmsLearner(const NlmsOptions& options, int bits);
  Prediction predict(const Example& x) const override;
  // --audit: the weight each feature meets (common::probe_slot); no stored weights for --audit_regressor.
  SlotAudit audit_slot(const Feature& f, int group) const override {
    return common::probe_slot(*this, f, group);
  }
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "nlms"; }
  void merge(Collective& ranks) override;
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }
  double weight(uint64_t slot) const { return w_[slot]; }
  double epsilon() const;  // the ε in force
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double score(const SparseVector& v) const;
  Prediction output(double p) const;
  NlmsOptions opt_;
  int bits_;
  ZeroedTable<double> w_;
  double norm2_sum_ = 0.0;  // sum of ||x||^2 over learned examples (for the default ε)
  double learned_ = 0.0;    // their count
  mutable VectorBuilder builder_;
  mutable uint64_t safeguards_ = 0;
};

LearnerRow nlms_row();

}  // namespace lepus
