// kwemm and klaser: WEMM and LASER in a kernel's feature space (E. Moroshko, "New Min-Max Algorithms and Analysis
// for Online Regression", M.Sc. thesis, Technion 2013: kernel WEMM in §3.3, Fig 3.3; the thesis states at the
// end of §5.3 that LASER "can be combined with Mercer kernels" without deriving it; its dual form below is ours,
// checked against primal LASER with an explicit polynomial feature map).
//
// Exact (dual) form, with every example learned from stored: w = Σ_i α_i φ(x_i) and
// Σ_{t-1} = σ_t I + Σ_{jk} β_jk φ(x_j)φ(x_k)ᵀ, σ_t = 1/b (kwemm) or 1/b + (t - 1)/c (klaser: the drift step adds I/c
// each round, from Σ_0 = (1/b - 1/c) I). Round t, k_i = K(x_i, x_t), κ = K(x_t, x_t):
//     g = β k,   m = σ_t κ + kᵀg,   p = αᵀk,   ŷ = p (kwemm) or p/(1 + m) (klaser),
//     after y:  r = y - p,  h = [g; σ_t],  f = 1 (kwemm: a/(1 + a m) = 1 with a = 1/(1 - m)) or 1/(1 + m),
//               α <- [α; 0] + f r h,   β <- [[β, 0], [0, 0]] - f h hᵀ.
// kwemm needs m < 1 (the primal wemm's guard, the same down-weighting); an importance weight k scales the round's
// point and label by √k. Cost O(t) kernel evaluations and O(t²) per round, O(t²) memory.
//
// --budget B: the primal learner (src/learners/minmax.h, full matrix) on the Nyström features ψ(x) of at most B
// landmarks picked by KORS (src/sketch/nystrom.h), a coordinate per landmark entering with the prior of a
// coordinate never excited (the thesis's own primal recursion; exact up to the projection on the landmarks' span).
// O(B·nnz + B²) per example, whatever the stream's length.
//
// Defaults relative to the kernel's scale κ̂ = the largest K(x, x) of the first 256 examples (1 for the RBF
// kernel): kwemm b = 2κ̂ (m <= 1/2 for inputs up to it), klaser c = 100κ̂ and b = 0.1κ̂ (the primal rows' choices,
// docs/algorithms/minmax.md).
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <optional>
#include <vector>

#include "core/coords.h"
#include "kernels/kernel.h"
#include "kernels/row_cache.h"
#include "learners/common/kernel_option.h"
#include "learners/minmax.h"
#include "lepus/learner.h"
#include "sketch/nystrom.h"

namespace lepus {

struct KernelMinmaxOptions {
  const MinmaxRule* rule = nullptr;  // wemm or laser
  kernels::KernelParams kernel;
  std::optional<double> b, c;  // --mm_b, --mm_c; default: multiples of κ̂
  uint64_t budget = 0;         // --budget (0: exact)
  static KernelMinmaxOptions from(const MinmaxRule& rule, const OptionValues& v);  // throws ConfigError
};

class KernelMinmaxLearner final : public Learner,
                                  public SharesPoints,
                                  public WarmsUp,
                                  public kernels::SharesKernelRows {
 public:
  static constexpr double kWemmEps = MinmaxLearner::kWemmEps;

  KernelMinmaxLearner(const KernelMinmaxOptions& options, int bits, uint64_t random_seed = 0);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return opt_.rule->drift ? "klaser" : "kwemm"; }
  std::vector<std::string> describe() const override;
  std::vector<std::string> summary_lines() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override;
  uint64_t warmup_wanted() const override;
  void warmup(std::span<const Example> prefix) override;
  // --oaa / --csoaa under --budget: K primal learners over one embedding (each kernel value once per example).
  bool share_points(uint32_t problems) override;
  // --oaa / --csoaa without --budget: the K instances share one cache of kernel rows (kernels::RowCache).
  bool share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) override;
  void predict_problems(const Example& x, std::span<Prediction> out) const override;
  void learn_problems(const Example& x, std::span<const ProblemStep> steps,
                      std::span<Prediction> out) override;

  // Tests: the round's m and the dual state.
  double last_m() const { return last_m_; }
  Eigen::VectorXd alpha() const { return alpha_.head(static_cast<Eigen::Index>(points_.size())); }
  Eigen::MatrixXd beta() const;
  double b() const { return b_; }
  double c() const { return c_; }

  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double sigma() const;  // σ_t of the coming round
  void resolve(double kappa_max);
  void make_inner() { inner_ = inner_learners(b_, c_); }
  // The budget's primal learners, one per problem, for the given b and c.
  std::vector<std::unique_ptr<MinmaxLearner>> inner_learners(double b, double c) const;
  const SparseVector& embedded(
      kernels::PointRef x) const;  // ψ(x) as a vector, for the budget's inner learner
  const SparseVector& as_vector(const Eigen::VectorXd& psi) const;
  double learn_exact(kernels::PointRef x, double y, double weight, double initial);
  // Part of state(): the embedding's fields, with its inner learners.
  template <class Self, class V>
  static void embedded_state(Self& self, V& v, double b, double c);

  KernelMinmaxOptions opt_;
  int bits_;
  uint64_t seed_;
  common::KernelSetting kernel_;
  double b_ = 0.0, c_ = 0.0;  // in force (0 until resolved)
  double scale_ = 0.0;        // κ̂ they were resolved with (0: given)
  uint64_t rounds_ = 0;
  kernels::CachedPoints points_;
  Eigen::VectorXd alpha_;
  Eigen::MatrixXd beta_;  // upper triangle of the top-left block
  std::unique_ptr<NystromEmbedding> nystrom_;
  uint32_t problems_ = 1;                              // share_points: K
  std::vector<std::unique_ptr<MinmaxLearner>> inner_;  // --budget: one per problem, once b is known
  double last_m_ = 0.0;
  mutable VectorBuilder builder_;
  mutable std::vector<kernels::SlotValue> buffer_;
  mutable std::vector<Coord> coords_;
  mutable SparseVector psi_vector_;
  mutable Eigen::VectorXd k_, g_, psi_;
  mutable uint64_t safeguards_ = 0;
};

std::vector<LearnerRow> kernel_minmax_rows();

}  // namespace lepus
