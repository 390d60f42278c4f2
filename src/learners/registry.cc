// THE learner table: one row per learner, with its one-line help and its own options.
#include <algorithm>
#include <limits>

#include "learners/aioli.h"
#include "learners/aioli_kernel.h"
#include "learners/ftprl.h"
#include "learners/ftprl_full.h"
#include "learners/gd.h"
#include "learners/kminmax.h"
#include "learners/kons.h"
#include "learners/minmax.h"
#include "learners/mix.h"
#include "learners/nlms.h"
#include "learners/scinol.h"
#include "learners/scinol2.h"
#include "learners/scinol_full.h"
#include "learners/vw_optimizers.h"
#include "lepus/errors.h"
#include "lepus/learner.h"

namespace lepus {
namespace {

using Kind = OptionSpec::Kind;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<LearnerRow> build_registry() {
  std::vector<LearnerRow> rows;
  rows.push_back(LearnerRow{
      "sgd",
      "VW's default learner, with VW's results to the last digit (on examples of 1,024 or more features, "
      "with --vw_exact): the one to use when you tune -l or need VW's exact numbers (any of its options "
      "selects it when --learner is not given)",
      {
          {"sgd", "", Kind::kFlag, "", "plain SGD: adaptive, normalized and invariant all off"},
          {"adaptive", "", Kind::kFlag, "", "per-coordinate AdaGrad rates (alone: only this mode is on)"},
          {"normalized", "", Kind::kFlag, "", "scale-normalized updates (alone: only this mode is on)"},
          {"invariant", "", Kind::kFlag, "", "importance-invariant updates (alone: only this mode is on)"},
          {"learning_rate",
           "l",
           Kind::kNumber,
           "0.5",
           "learning rate (10 when adaptive and normalized are not both on and -l is not given)",
           {0.0, kInf, true, false}},
          {"power_t",
           "",
           Kind::kNumber,
           "0.5",
           "t-decay exponent of the learning rate (above 1 the rate vanishes after a few examples: warned)",
           {0.0, kInf, false, false}},
          {"initial_t", "", Kind::kNumber, "0", "initial t (1 for plain sgd)", {0.0, kInf, false, false}},
          {"l1", "", Kind::kNumber, "0", "L1 regularization (truncated gradient)", {0.0, kInf, false, false}},
          {"l2", "", Kind::kNumber, "0", "L2 regularization (weight decay)", {0.0, kInf, false, false}},
          {"min_prediction", "", Kind::kNumber, "",
           "smallest prediction (fixes the clipping range's low end)"},
          {"max_prediction", "", Kind::kNumber, "",
           "largest prediction (fixes the clipping range's high end)"},
          {"decay_learning_rate",
           "",
           Kind::kNumber,
           "1",
           "multiply the learning rate by this after each pass",
           {0.0, kInf, false, false}},
          {"vw_exact", "", Kind::kFlag, "",
           "VW's results to the last bit on long examples too (by default an example of 1,024 or more "
           "features, as "
           "-q makes them, adds up its terms in 8 lanes: 5-15% faster, VW's figures in all but the last "
           "bits)"},
      },
      [](const LearnerContext& c) {
        return std::make_unique<GdLearner>(GdOptions::from(c.options), c.loss, c.bits, c.test_only);
      },
      LearnerTraits{}});  // every loss, several passes
  // Plain --invariant (without adaptive or normalized) scales by VW's per-group sum of x^2.
  rows.back().traits.needs_invariant_norm = [](const OptionValues& o) {
    return o.given("invariant") && !o.given("adaptive") && !o.given("normalized");
  };
  rows.back().traits.merge =
      "VW's allreduce: weights averaged weighted by the ranks' adaptive sums (plain average without "
      "--adaptive); an approximation of one learner over all the data, exact with one rank";
  rows.push_back(scinol_row());
  rows.push_back(scinol2_row());
  rows.push_back(scinol1_row());
  rows.push_back(ftprl_diag_row());
  rows.push_back(ftprl_const_row());
  rows.push_back(ftprl_scale_row());
  rows.push_back(nlms_row());
  rows.push_back(aioli_row());
  rows.push_back(scinol_full_row());
  rows.push_back(ftprl_full_row());
  rows.push_back(vw_ftrl_row());
  rows.push_back(vw_pistol_row());
  rows.push_back(vw_coin_row());
  rows.push_back(mix_row());
  for (auto& row : minmax_rows()) rows.push_back(std::move(row));
  rows.push_back(kons_row());
  rows.push_back(sketched_kons_row());
  for (auto& row : kernel_minmax_rows()) rows.push_back(std::move(row));
  rows.push_back(aioli_kernel_row());
  return rows;
}

}  // namespace

const std::vector<LearnerRow>& learner_registry() {
  static const std::vector<LearnerRow> rows = build_registry();
  return rows;
}

const LearnerRow* find_learner(std::string_view name) {
  for (const auto& row : learner_registry())
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace lepus
