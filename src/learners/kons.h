// kons and sketched-kons: the Kernel Online Newton Step and its sketched version (D. Calandriello, A. Lazaric,
// M. Valko, "Second-order kernel online convex optimization with adaptive sketching", ICML 2017, arXiv
// 1706.04892; Algorithm 1 with eq. (1), Lemmas 1-2; Algorithm 3, Lemma 4).
//
// ONS in the kernel's feature space: A_t = αI + Σ_{s<=t} γ_s φ_s φ_sᵀ with γ_s = η ġ_s² (the step size folded in),
// u_{t+1} = w_t - A_t⁻¹ g_t, and w_t the A_{t-1}-norm projection of u_t onto {w : |φ_tᵀw| <= C}, whose prediction
// is ŷ_t = clip(ỹ_t, -C, C), ỹ_t = φ_tᵀu_t (eq. (1)). Never forming w, u or A (the (β, γ) form, equivalent to
// Lemmas 1-2 and defined when ġ_t = 0):
//     ỹ_t = Σ_s a_s K(x_s, x_t),   a = (β - Γ^½ N⁻¹ Γ^½ Kβ) / α,   N = Γ^½ K Γ^½ + αI over the points with γ > 0,
//     τ̃_t = φ_tᵀA_{t-1}⁻¹φ_t = (k_tt - k̂ᵀN⁻¹k̂)/α,   k̂ = Γ^½ k_t,
//     after the label:  γ_t = η ġ_t²,   β_t = γ_t ŷ_t - h_t/τ̃_t - ġ_t,   h_t = ỹ_t - ŷ_t,
// where ġ_t is the loss's derivative at the clipped ŷ_t. A round with γ_t = β_t = 0 stores nothing; N⁻¹ grows by
// bordering (Schur complement α(1 + γ_t τ̃_t) >= α). Cost: O(t) kernel evaluations to predict, O(t + n_γ²) to learn.
// Regret (Theorem 1, σ-curved losses, η = σ): R_T <= α‖w*‖² + (2/σ) d_eff(α/(σL²)) log(2σL²T).
//
// sketched-kons (Algorithm 3): the preconditioner keeps only the rounds whose coin succeeds,
// γ_t = z_t η ġ_t², z_t ~ Bernoulli(max(min(β_K τ̃^K_t, 1), γ_min)), where τ̃^K_t is the leverage estimate of KORS
// (src/sketch/kors.h) on the rescaled point ġ_t√η φ_t; the coins of KORS and of the sketch share one uniform
// draw (so KORS's dictionary is a subset of the sketch). β_t's rule is unchanged (z_t enters through γ_t), the
// numerator still sums over every stored point: prediction costs O(t) kernel evaluations, the linear algebra
// O(B_t²) with B_t the sketch's size. Theorem 3: the regret above divided by max(γ_min, β_K τ_min).
//
// Hyper-parameters (lepus's defaults, docs/algorithms/kons.md): α = 1; C = the largest |y| seen (squared loss,
// estimated online and saved) or 5 (logistic: scores in [-5, 5]); η = σ, the loss's curvature over |ŷ| <= C:
// 1/(8C²) for the squared loss (the paper's Assumption 2), e^{-C}/(1 + C) for the logistic loss (AIOLI's Lemma 5).
// An importance weight k multiplies ġ (so γ by k²). Uniform draws: a hash of (--random_seed, round), so a resumed
// run draws what the uninterrupted one would.
//
// --oaa / --csoaa under --budget (share_points, beyond the paper): the K classes share the landmarks and ψ(x), and
// either keep an A⁻¹ each (--kons_class_matrix per_class: K exact kons learners) or share one A whose increment is
// each example's largest γ_k (shared: O(B²) per example instead of K·O(B²); it dominates every class's own matrix,
// so Theorem 1's last term becomes 4C²Σ_t(γ_t − σġ²_{t,k}) for class k; docs/algorithms/kons.md, "Classes").
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/coords.h"
#include "kernels/kernel.h"
#include "kernels/row_cache.h"
#include "learners/common/kernel_option.h"
#include "lepus/learner.h"
#include "sketch/bordered_inverse.h"
#include "sketch/kors.h"
#include "sketch/nystrom.h"

namespace lepus {

struct KonsOptions {
  kernels::KernelParams
      kernel;                  // --kernel, --degree, --coef0, --bandwidth (0: the median heuristic); as given
  double alpha = 1.0;          // --kons_alpha
  std::optional<double> clip;  // --kons_C; default: largest |y| seen (squared), 5 (logistic)
  std::optional<double> eta;   // --kons_eta; default σ of the loss at C
  bool sketched = false;       // sketched-kons
  KorsOptions kors;            // --kors_eps, --kors_beta (sketched-kons)
  double gamma_min = 0.1;      // --kons_gamma: the coin's floor (sketched-kons)
  uint64_t budget = 0;         // --budget: at most this many landmarks (Nyström embedding); 0: exact
  // --kons_class_matrix: under --oaa / --csoaa with --budget, one A for the K classes or one each.
  enum class ClassMatrix : uint8_t { kShared, kPerClass };
  ClassMatrix class_matrix = ClassMatrix::kShared;
  static KonsOptions from(const OptionValues& values, bool sketched);  // throws ConfigError
};

class KonsLearner final : public Learner,
                          public SharesPoints,
                          public WarmsUp,
                          public kernels::SharesKernelRows {
 public:
  KonsLearner(const KonsOptions& options, const Loss& loss, int bits, uint64_t random_seed);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return opt_.sketched ? "sketched-kons" : "kons"; }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }
  std::vector<std::string> summary_lines()
      const override;  // the kernel, with the bandwidth the warm-up chose
  uint64_t warmup_wanted() const override;
  void warmup(std::span<const Example> prefix) override;  // the median heuristic (kernels::median_distance)
  // --oaa / --csoaa under --budget: K problems over one embedding (each kernel value once per example), each with
  // its own A⁻¹ and u, so that each learns as a learner of its own would.
  bool share_points(uint32_t problems) override;
  // --oaa / --csoaa without --budget: the K instances share one cache of kernel rows (kernels::RowCache).
  bool share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) override;
  void predict_problems(const Example& x, std::span<Prediction> out) const override;
  void learn_problems(const Example& x, std::span<const ProblemStep> steps,
                      std::span<Prediction> out) override;

  // For tests: the round's quantities after learn(), and the state's sizes.
  struct Round {
    double ytilde = 0.0, yhat = 0.0, gdot = 0.0, tau = 0.0, gamma = 0.0, beta = 0.0;
    double kors_tau = 0.0, kors_p = 0.0;
    bool kors_kept = false, sketched_in = false;
  };
  const Round& last_round() const { return last_; }
  size_t stored_points() const { return points_.size(); }
  size_t sketch_size() const { return act_.size(); }
  size_t dictionary_size() const { return kors_ ? kors_->size() : 0; }
  size_t landmarks() const { return nystrom_ ? nystrom_->size() : 0; }
  // The uniform draw of a round: tests replace it to replay the paper's worked examples.
  void set_uniforms(std::vector<double> u) { uniforms_ = std::move(u); }
  // The kernel in force, with the bandwidth the warm-up chose and where it came from.
  const common::KernelSetting& kernel() const { return kernel_; }

  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double clip_radius(size_t problem) const;
  double eta(size_t problem) const;
  Prediction output(double ytilde, size_t problem) const;
  double uniform(uint64_t round) const;
  // ỹ for the point, with k(x_s, x) for every stored point into kv_.
  double score(kernels::PointRef x) const;
  void refresh_coefficients();
  // --budget: ψ(x) into kv_ (offered as a landmark first when it teaches); a problem's score and step on it.
  void embed(kernels::PointRef px, bool offer, uint64_t round);
  double embedded_score(size_t problem, double initial) const;
  Prediction embedded_step(size_t problem, double initial, float label, float weight, uint64_t round,
                           bool& learned);
  void shared_matrix_steps(double initial, std::span<const ProblemStep> steps, uint64_t round,
                           std::span<Prediction> out, bool& learned);
  void add_coordinate(Eigen::Index n);
  // Parts of state(): the hyper-parameters, the points' fields, the embedding's; the readable lines of u and of
  // the points.
  template <class Self, class V>
  static KonsOptions options_state(Self& self, V& v);
  template <class Self, class V>
  static void points_state(Self& self, V& v);
  template <class Self, class V>
  static void embedded_state(Self& self, V& v, const KonsOptions& o);
  void write_u(std::ostream& out) const;
  void write_points(std::ostream& out) const;

  KonsOptions opt_;
  const Loss& loss_;
  int bits_;
  uint64_t seed_;
  // The kernel: the RBF bandwidth by the median heuristic over the warm-up (or the first point's norm without one),
  // saved with the model. One object for the learner's life: KORS and the embedding keep a reference to it.
  common::KernelSetting kernel_;
  kernels::CachedPoints points_;      // every stored point, in order
  std::vector<double> beta_, gamma_;  // per stored point
  std::vector<double> a_;             // dual coefficients: ỹ(x) = Σ a_s K(x_s, x)
  std::vector<uint32_t> act_;         // stored points with γ > 0: the rows of N
  Eigen::VectorXd kbeta_;             // (Kβ)_i for i in act_
  BorderedInverse n_inv_;             // N⁻¹
  std::unique_ptr<Kors> kors_;        // sketched-kons
  // --budget: ONS with the clipping projection (the primal form of eq. (1)) on the Nyström embedding ψ(x), per
  // problem (one, or K: share_points).
  std::unique_ptr<NystromEmbedding> nystrom_;
  // A⁻¹ over ψ's coordinates (upper triangle of the top-left block; capacity doubles): one per problem, or one for
  // all (--kons_class_matrix shared); u per problem.
  std::vector<Eigen::MatrixXd> ainv_{1};
  std::vector<Eigen::VectorXd> u_{1};
  std::vector<std::pair<Round, bool>>
      step_rounds_;                         // shared matrix: each step's round, and whether it taught
  std::vector<double> max_abs_label_{0.0};  // per problem: the squared loss's default C
  uint64_t rounds_ = 0;
  std::vector<double> uniforms_;  // tests only: replaces the hashed draws
  Round last_;
  mutable VectorBuilder builder_;
  mutable std::vector<kernels::SlotValue> buffer_;
  mutable Eigen::VectorXd kv_, kh_, v_, e_, r_;
  mutable uint64_t safeguards_ = 0;
};

LearnerRow kons_row();
LearnerRow sketched_kons_row();

}  // namespace lepus
