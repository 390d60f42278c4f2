// aioli-kernel: non-parametric AIOLI, improper online logistic regression in a kernel's feature space (R.
// Jézéquel, P. Gaillard, A. Rudi, "Efficient improper learning for online logistic regression", COLT 2020,
// arXiv 2003.08109, §4.1). The paper states the regret in an RKHS, O(B·d_eff(Bλ) + λB²) with d_eff(λ) =
// Tr(K_nn(K_nn + λI)⁻¹), and the O(n³) total cost of the kernel trick, but does not write the algorithm out:
// the representer form below is lepus's derivation from the primal eq. (3)-(5) (src/learners/aioli.h),
// checked against the primal learner with the linear kernel and with the explicit feature map of a polynomial
// kernel.
//
// Primal (feature map φ): A_{t-1} = λI + Σ_{s<t} κ_s φ_s φ_sᵀ, b_{t-1} = Σ_{s<t} β_s φ_s, and ŷ_t the unique
// root of
//     z + (s_t/2) tanh(z/2) = c_t,   s_t = φ_tᵀA_{t-1}⁻¹φ_t,  c_t = φ_tᵀA_{t-1}⁻¹b_{t-1}       (f' >= 1,
//     aioli_root), after the label, m_t = y_t ŷ_t:  κ_t = 1 / (4 (1 + BR) (1 + cosh m_t)),
//                                      β_t = (y_t/2) (σ(-m_t) + m_t σ(m_t) σ(-m_t) / (1 + BR)) (aioli_step).
// Representer form (Woodbury on A_{t-1}): with k = [K(x_s, x_t)]_{s<t}, K̂ = diag(κ), k̂ = K̂^½ k and
// N = K̂^½ K K̂^½ + λI over the stored points,
//     s_t = (K(x_t, x_t) - k̂ᵀN⁻¹k̂) / λ,      c_t = (kᵀβ - k̂ᵀN⁻¹ K̂^½ (Kβ)) / λ,
// after the label: N⁻¹ is bordered by the column √κ_t k̂ and the diagonal κ_t K(x_t, x_t) + λ, whose Schur
// complement is λ(1 + κ_t s_t) >= λ (src/sketch/bordered_inverse.h); (Kβ)_s += K(x_s, x_t) β_t for s < t and
// (Kβ)_t = kᵀβ + K(x_t, x_t) β_t. Every point learned from is stored: O(t) kernel evaluations and O(t²) per
// round (the improper term s_t is a quadratic form in every past point, prediction included), O(t²) memory.
// κ_t and β_t are taken at the played prediction (the float reported), as the paper's Theorem 7 assumes.
//
// Hyper-parameters, as the primal learner's: B (--aioli_B, default 1), λ (--aioli_lambda, default 1/B²,
// Theorem 1's choice), R the bound on ‖φ(x)‖ = √K(x, x) (--aioli_R; default √ of the largest K(x, x) learned
// from so far, saved in the model: 1 for the RBF kernel, ‖x‖ for the linear one, as the primal learner's
// largest ‖x‖). An importance weight k multiplies κ_t and β_t (k repetitions of the surrogate). A point with
// K(x, x) = 0 (φ = 0) changes nothing and is not stored. A round whose numbers overflow (K(x, x) or a kernel
// value beyond 1e100, non-finite s, c, κ or β) is skipped and counted as a safeguard.
//
// --budget B (beyond the paper, which leaves Nyström approximations open): the primal learner (full matrix)
// on the Nyström features ψ(x) = L⁻¹k_Z(x) of at most B landmarks Z picked by KORS (src/sketch/nystrom.h,
// ridge λ), each new landmark a new coordinate entering with the prior λ of a coordinate never excited. Each
// example is offered as a landmark before it is learned from, so that while the landmarks span the data this
// is the exact learner (the primal form is invariant under the rotation to the landmarks' orthonormal
// coordinates). O(B·nnz + B²) per example, whatever the stream's length; --passes allowed (refused for the
// exact form, whose store would grow with every pass).
//
// --oaa / --csoaa K under --budget: one learner holds the K problems over one embedding (share_points).
// --aioli_class_matrix per_class: K primal learners, each as a learner of its own (O(B²) per class and
// example). shared (the default): one A for the K problems and one b per problem. Per example, every
// problem's prediction from the example's start (a problem listed twice sees its first step's update):
//     u = A⁻¹ψ, s = ψᵀu, per problem k: c_k = b_kᵀu, ŷ_k = root(s, c_k), κ_k and β_k at ŷ_k,
//     A += (max_k κ_k) ψψᵀ,   b_k += β_k ψ
// O(B²) once and O(B) per problem. A takes the largest κ, so it dominates each problem's own matrix
// (docs/algorithms/aioli.md, "Classes", says what that gives up).
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/coords.h"
#include "kernels/kernel.h"
#include "kernels/row_cache.h"
#include "learners/aioli.h"
#include "learners/common/kernel_option.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"
#include "sketch/bordered_inverse.h"
#include "sketch/matrix.h"
#include "sketch/nystrom.h"

namespace lepus {

struct AioliKernelOptions {
  kernels::KernelParams kernel;  // --kernel, --degree, --coef0, --bandwidth (0: the median heuristic)
  double radius = 1.0;           // --aioli_B
  std::optional<double> lambda;  // --aioli_lambda; default 1/B²
  std::optional<double> r;       // --aioli_R; default √ of the largest K(x, x) learned from
  uint64_t budget = 0;           // --budget: at most this many landmarks; 0: exact
  enum class ClassMatrix { kShared, kPerClass };
  ClassMatrix class_matrix = ClassMatrix::kShared;  // --aioli_class_matrix (K problems under --budget)
  double ridge() const { return lambda ? *lambda : 1.0 / (radius * radius); }
  static AioliKernelOptions from(const OptionValues& values);  // throws ConfigError
};

class AioliKernelLearner final : public Learner,
                                 public SharesPoints,
                                 public WarmsUp,
                                 public kernels::SharesKernelRows {
 public:
  static constexpr uint64_t kMaxBudget = 65536;  // the full matrix's largest size

  AioliKernelLearner(const AioliKernelOptions& options, const Loss& loss, int bits, bool test_only = false,
                     uint64_t random_seed = 0);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "aioli-kernel"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  std::vector<std::string> summary_lines() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override;
  uint64_t warmup_wanted() const override;
  void warmup(std::span<const Example> prefix) override;  // the RBF bandwidth by the median heuristic
  // --oaa / --csoaa under --budget: K primal learners over one embedding (each kernel value once per
  // example).
  bool share_points(uint32_t problems) override;
  // --oaa / --csoaa without --budget: the K instances share one cache of kernel rows (kernels::RowCache).
  bool share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) override;
  void predict_problems(const Example& x, std::span<Prediction> out) const override;
  void learn_problems(const Example& x, std::span<const ProblemStep> steps,
                      std::span<Prediction> out) override;

  // Tests: the quantities of the last learn() (exact form: s, c, ŷ in double, then κ and β with the
  // importance weight; --budget: ŷ only), the bound R in force, and the state's sizes.
  struct Round {
    double s = 0.0, c = 0.0, yhat = 0.0, kappa = 0.0, beta = 0.0;
  };
  const Round& last_round() const { return last_; }
  double r() const { return opt_.r ? *opt_.r : std::sqrt(r2_max_); }
  size_t stored_points() const { return points_.size(); }
  size_t landmarks() const { return nystrom_ ? nystrom_->size() : 0; }
  const common::KernelSetting& kernel() const { return kernel_; }

  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  // The exact form's s, c and ŷ (offset included) for the point, with k into k_, k̂ into kh_, N⁻¹k̂ into v_ and
  // kᵀβ into kb_; `finite` (optional) says whether s and c were (a non-finite one is taken as 0 and counted).
  Round evaluate(kernels::PointRef x, double initial, bool* finite = nullptr) const;
  Prediction output(double yhat) const { return clip_.of(common::to_float(yhat, safeguards_)); }
  Prediction learn_exact(const Example& x, kernels::PointRef px);
  Prediction learn_budget(const Example& x, kernels::PointRef px);
  void learn_budget(kernels::PointRef px, double initial, std::span<const ProblemStep> steps,
                    std::span<Prediction> out);
  const SparseVector& as_vector(const Eigen::VectorXd& psi) const;  // ψ as the inner learner's vector
  std::unique_ptr<AioliLearner> make_inner(const AioliKernelOptions& o) const;
  // The shared class matrix (--aioli_class_matrix shared): A over ψ's coordinates, untracked.
  std::unique_ptr<Matrix> make_shared_matrix(const AioliKernelOptions& o) const;
  size_t problems() const { return shared_a_ ? shared_b_.size() : std::max<size_t>(inner_.size(), 1); }
  double shared_solve(const SparseVector& v) const;  // s = ψᵀA⁻¹ψ, with A⁻¹ψ into solved_
  double shared_yhat(uint32_t problem, double s, double initial) const;  // from solved_
  // The steps of problems listed once each, every prediction from the example's start; learn_budget splits
  // the steps where a problem repeats.
  void shared_steps(const SparseVector& v, double initial, double ktt, bool sane,
                    std::span<const ProblemStep> steps, std::span<Prediction> out);
  std::unique_ptr<NystromEmbedding> make_nystrom(const AioliKernelOptions& o) const;
  // Parts of state(): the embedding's fields and the exact form's.
  template <class Self, class V>
  static void embedded_state(Self& self, V& v, const AioliKernelOptions& o);
  template <class Self, class V>
  static void exact_state(Self& self, V& v);

  AioliKernelOptions opt_;
  const Loss& loss_;
  int bits_;
  uint64_t seed_;
  common::LabelClip clip_;
  common::KernelSetting kernel_;
  double r2_max_ = 0.0;  // the largest K(x, x) learned from (R² when --aioli_R is not given)
  uint64_t rounds_ = 0;  // rounds learned
  // Exact form: every point learned from, its κ (√κ kept alongside) and β, Kβ and N⁻¹.
  kernels::CachedPoints points_;
  std::vector<double> kappa_, root_kappa_, beta_;
  Eigen::VectorXd kbeta_;  // (Kβ)_s in its first points_.size() entries; capacity doubles
  BorderedInverse n_inv_;
  // --budget: the landmarks and the primal learner on ψ.
  std::unique_ptr<NystromEmbedding> nystrom_;
  std::vector<std::unique_ptr<AioliLearner>> inner_;  // one per problem (share_points: K); none when shared
  std::unique_ptr<Matrix> shared_a_;                  // --aioli_class_matrix shared under share_points
  std::vector<TrackedVector> shared_b_;               // its b per problem, over ψ's 2^inner bits slots
  std::vector<double> step_beta_;                     // shared_steps' scratch
  std::vector<uint8_t> listed_;                       // learn_budget's scratch: problems in the current group
  mutable std::vector<Coord> solved_;                 // A⁻¹ψ (shared)
  Round last_;
  mutable VectorBuilder builder_;
  mutable std::vector<kernels::SlotValue> buffer_;
  mutable std::vector<Coord> coords_;
  mutable SparseVector psi_vector_;
  mutable Eigen::VectorXd k_, kh_, v_, psi_;
  mutable double kb_ = 0.0;
  mutable uint64_t safeguards_ = 0;
};

LearnerRow aioli_kernel_row();

}  // namespace lepus
