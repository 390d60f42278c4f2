// aioli-kernel: see aioli_kernel.h for the algorithm, its paper and the equations.
#include "learners/aioli_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 1;                      // one problem
constexpr uint32_t kProblemsStateVersion = 2;              // K problems over one embedding (share_points)
constexpr uint32_t kSharedStateVersion = 3;                // the same with one class matrix (shared)
constexpr uint64_t kLandmarkSalt = 0x5851F42D4C957F2Dull;  // the landmark coins' stream (--budget)
constexpr double kMaxMagnitude = 1e100;  // a round with K(x, x) or κK(x, x) or |β|√K(x, x) beyond is skipped
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) { return common::number(v, 17); }

// KORS's ε and oversampling β as the other kernel learners use them; its ridge is the learner's λ.
KorsOptions landmark_sampler(double lambda) { return KorsOptions{lambda, 0.5, 30.0}; }

// The inner learner's slots: ψ's coordinates 0..budget-1.
int inner_bits(uint64_t budget) {
  int b = 1;
  while ((uint64_t{1} << b) < budget) ++b;
  return b;
}

}  // namespace

AioliKernelOptions AioliKernelOptions::from(const OptionValues& v) {
  check_option_values(aioli_kernel_row().options, v);  // ranges and choices declared once in the row
  AioliKernelOptions o;
  o.kernel = common::kernel_params_of(v, common::kClassificationBandwidthFactor);  // logistic loss only
  if (v.has("aioli_B")) o.radius = v.number("aioli_B");
  if (v.has("aioli_lambda")) o.lambda = v.number("aioli_lambda");
  if (v.has("aioli_R")) o.r = v.number("aioli_R");
  o.budget = common::budget_of(v);
  if (v.has("aioli_class_matrix") && v.text("aioli_class_matrix") == "per_class")
    o.class_matrix = ClassMatrix::kPerClass;
  if (o.budget > AioliKernelLearner::kMaxBudget)
    throw ConfigError("--learner aioli-kernel: --budget is at most " +
                      std::to_string(AioliKernelLearner::kMaxBudget) + " (its matrix takes 8 B^2 bytes)");
  return o;
}

AioliKernelLearner::AioliKernelLearner(const AioliKernelOptions& options, const Loss& loss, int bits,
                                       bool test_only, uint64_t random_seed)
    : opt_(options),
      loss_(loss),
      bits_(bits),
      seed_(random_seed),
      clip_(loss.initial_range(), test_only),
      kernel_(options.kernel),
      builder_(bits) {
  opt_.lambda = opt_.ridge();  // the default 1/B^2 resolved: the state holds lambda
  if (opt_.budget > 0) {
    nystrom_ = make_nystrom(opt_);
    inner_.push_back(make_inner(opt_));
  }
}

std::unique_ptr<NystromEmbedding> AioliKernelLearner::make_nystrom(const AioliKernelOptions& o) const {
  return std::make_unique<NystromEmbedding>(kernel_.kernel(), landmark_sampler(o.ridge()), o.budget);
}

// The budget's primal learner: full matrix over the landmarks' coordinates, the same B, λ and R.
std::unique_ptr<AioliLearner> AioliKernelLearner::make_inner(const AioliKernelOptions& o) const {
  AioliOptions a;
  a.radius = o.radius;
  a.lambda = o.ridge();
  a.r = o.r;
  a.matrix = MatrixKind::kFull;
  a.max_dense = o.budget;
  a.full_cap = o.budget;
  return std::make_unique<AioliLearner>(a, loss_, inner_bits(o.budget));
}

std::unique_ptr<Matrix> AioliKernelLearner::make_shared_matrix(const AioliKernelOptions& o) const {
  MatrixOptions m;
  m.kind = MatrixKind::kFull;
  m.lambda = o.ridge();
  m.full_cap = o.budget;
  m.bits = inner_bits(o.budget);
  return make_matrix(m);
}

uint64_t AioliKernelLearner::warmup_wanted() const {
  return rounds_ == 0 && kernel_.pending() ? common::kKernelWarmup : 0;
}

void AioliKernelLearner::warmup(std::span<const Example> prefix) {
  if (warmup_wanted() == 0) return;
  kernel_.estimate(prefix, builder_);
}

AioliKernelLearner::Round AioliKernelLearner::evaluate(kernels::PointRef x, double initial,
                                                       bool* finite) const {
  const auto n = static_cast<Eigen::Index>(points_.size());
  const double ktt = kernel_.kernel().self(x);
  k_.resize(n);
  kh_.resize(n);
  points_.row(kernel_.kernel(), x, k_.data());
  for (Eigen::Index i = 0; i < n; ++i) kh_(i) = root_kappa_[static_cast<size_t>(i)] * k_(i);
  n_inv_.solve(kh_, v_);
  // In order (any thread count): q = k̂ᵀN⁻¹k̂, kᵀβ and k̂ᵀN⁻¹K̂^½(Kβ).
  double q = 0.0, kb = 0.0, e = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto s = static_cast<size_t>(i);
    q += kh_(i) * v_(i);
    kb += k_(i) * beta_[s];
    e += v_(i) * root_kappa_[s] * kbeta_(i);
  }
  kb_ = kb;
  const double lambda = opt_.ridge();
  Round r;
  r.s = (ktt - q) / lambda;
  r.c = (kb - e) / lambda;
  const bool ok = std::isfinite(r.s) && std::isfinite(r.c);
  if (!ok) [[unlikely]] {
    ++safeguards_;
    r.s = std::isfinite(r.s) ? r.s : 0.0;
    r.c = std::isfinite(r.c) ? r.c : 0.0;
  }
  if (finite) *finite = ok;
  r.s = std::max(r.s, 0.0);  // s >= 0; cancellation may leave a tiny negative when x is in the span
  r.yhat = aioli_root(r.s, r.c) + initial;
  return r;
}

// ψ as the sparse vector the primal learner reads: a slot per landmark.
const SparseVector& AioliKernelLearner::as_vector(const Eigen::VectorXd& psi) const {
  psi_vector_ = common::dense_as_sparse(psi, coords_);
  return psi_vector_;
}

Prediction AioliKernelLearner::predict(const Example& x) const {
  const kernels::PointRef px = kernels::sorted_point(builder_.build(x), buffer_);
  if (nystrom_) {  // under share_points, problem 0 (as learn())
    nystrom_->embed(px, psi_);
    if (shared_a_) return output(shared_yhat(0, shared_solve(as_vector(psi_)), x.initial));
    return output(inner_[0]->predict_vector(as_vector(psi_), x.initial));
  }
  return output(evaluate(px, x.initial).yhat);
}

Prediction AioliKernelLearner::learn(const Example& x) {
  clip_.see(x);
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  if (!common::teaches(x)) return predict(x);
  if (kernel_.pending() && v.size() > 0)
    kernel_.estimate_from(v);  // no warm-up: a caller that is not the driver
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  return nystrom_ ? learn_budget(x, px) : learn_exact(x, px);
}

Prediction AioliKernelLearner::learn_exact(const Example& x, kernels::PointRef px) {
  bool finite = true;
  Round r = evaluate(px, x.initial, &finite);
  const Prediction p = output(r.yhat);
  last_ = r;
  const double ktt = kernel_.kernel().self(px);
  if (ktt == 0.0) return p;  // φ(x) = 0: the round changes neither A nor b
  const double y = x.label > 0.0f ? 1.0 : -1.0, weight = static_cast<double>(x.weight);
  const double r2 = std::max(r2_max_, ktt);
  const double bound = opt_.r ? *opt_.r : std::sqrt(r2);
  // The surrogate at the played prediction (the float reported).
  const AioliStep st = aioli_step(y * static_cast<double>(p.raw), y, 1.0 + opt_.radius * bound);
  r.kappa = weight * st.kappa;
  r.beta = weight * st.beta;
  last_ = r;
  const bool sane = finite && std::isfinite(ktt) && ktt <= kMaxMagnitude && std::isfinite(r.kappa) &&
                    std::isfinite(r.beta) && r.kappa * ktt <= kMaxMagnitude &&
                    std::fabs(r.beta) * std::sqrt(ktt) <= kMaxMagnitude;
  if (!sane) [[unlikely]] {
    ++safeguards_;
    return p;
  }
  r2_max_ = r2;
  ++rounds_;
  const auto n = static_cast<Eigen::Index>(points_.size());
  // Border N⁻¹ by the column √κ k̂ (its N⁻¹b is √κ N⁻¹k̂) with the Schur complement λ(1 + κ s).
  const double rk = std::sqrt(r.kappa);
  v_ *= rk;
  n_inv_.border(v_, opt_.ridge() * (1.0 + r.kappa * r.s));
  // Kβ: every stored point gains K(x_s, x) β_t; the new one is kᵀβ + K(x, x) β_t.
  if (kbeta_.size() <= n) {
    Eigen::VectorXd grown = Eigen::VectorXd::Zero(std::max<Eigen::Index>(16, 2 * kbeta_.size()));
    grown.head(n) = kbeta_.head(n);
    kbeta_.swap(grown);
  }
  for (Eigen::Index i = 0; i < n; ++i) kbeta_(i) += k_(i) * r.beta;
  kbeta_(n) = kb_ + ktt * r.beta;
  points_.add(px);
  kappa_.push_back(r.kappa);
  root_kappa_.push_back(rk);
  beta_.push_back(r.beta);
  return p;
}

// --budget: x is offered as a landmark before it is learned from (the choice depends on x alone), then the
// primal learner takes ψ(x), with √K(x, x) in place of ‖ψ(x)‖ in its default R (the exact form's R).
Prediction AioliKernelLearner::learn_budget(const Example& x, kernels::PointRef px) {
  const ProblemStep step{0, x.label, x.weight};
  Prediction out;
  learn_budget(px, x.initial, {&step, 1}, {&out, 1});
  return out;
}

// The budget route for the steps of one example (one, or one per class: share_points), each step's problem
// its own primal learner on the same ψ(x); the caller has seen that some step teaches.
void AioliKernelLearner::learn_budget(kernels::PointRef px, double initial,
                                      std::span<const ProblemStep> steps, std::span<Prediction> out) {
  nystrom_->embed(px, psi_);
  const double ktt = kernel_.kernel().self(px);
  const bool sane = std::isfinite(ktt) && ktt <= kMaxMagnitude && psi_.allFinite();
  if (!sane) [[unlikely]]
    ++safeguards_;
  else
    nystrom_->offer(px, psi_, common::hashed_uniform(seed_ ^ kLandmarkSalt, rounds_));
  const SparseVector& v = as_vector(psi_);
  if (shared_a_) {  // groups in which no problem repeats, in order
    listed_.assign(shared_b_.size(), 0);
    size_t start = 0;
    for (size_t i = 0; i <= steps.size(); ++i) {
      if (i < steps.size() && !listed_[steps[i].problem]) {
        listed_[steps[i].problem] = 1;
        continue;
      }
      shared_steps(v, initial, ktt, sane, steps.subspan(start, i - start), out.subspan(start, i - start));
      if (i == steps.size()) break;
      std::fill(listed_.begin(), listed_.end(), 0);
      listed_[steps[i].problem] = 1;
      start = i;
    }
  }
  for (size_t i = 0; !shared_a_ && i < steps.size(); ++i) {
    AioliLearner& inner = *inner_[steps[i].problem];
    last_ = Round{};
    if (sane && steps[i].weight > 0.0f) {
      const double y = steps[i].label > 0.0f ? 1.0 : -1.0;
      last_.yhat = inner.learn_vector(v, y, static_cast<double>(steps[i].weight), initial, std::sqrt(ktt));
    } else {
      last_.yhat = inner.predict_vector(v, initial);
    }
    out[i] = output(last_.yhat);
  }
  if (!sane) return;
  r2_max_ = std::max(r2_max_, ktt);
  ++rounds_;
}

double AioliKernelLearner::shared_solve(const SparseVector& v) const {
  double s = shared_a_->solve(std::span<const Coord>(v.begin(), v.size()), solved_);
  if (!std::isfinite(s)) [[unlikely]] {
    ++safeguards_;
    s = 0.0;
  }
  return std::max(s, 0.0);
}

double AioliKernelLearner::shared_yhat(uint32_t problem, double s, double initial) const {
  double c = shared_b_[problem].dot(solved_);
  if (!std::isfinite(c)) [[unlikely]] {
    ++safeguards_;
    c = 0.0;
  }
  return aioli_root(s, c) + initial;
}

void AioliKernelLearner::shared_steps(const SparseVector& v, double initial, double ktt, bool sane,
                                      std::span<const ProblemStep> steps, std::span<Prediction> out) {
  const double s = shared_solve(v);
  // R as each problem's own primal learner takes it: the largest norm so far, this example's included.
  const double bound = opt_.r ? *opt_.r : std::sqrt(std::max(r2_max_, ktt));
  double kappa = 0.0;
  step_beta_.assign(steps.size(), 0.0);
  for (size_t i = 0; i < steps.size(); ++i) {
    last_ = Round{};
    last_.yhat = shared_yhat(steps[i].problem, s, initial);
    out[i] = output(last_.yhat);
    if (!sane || !(steps[i].weight > 0.0f) || v.size() == 0) continue;
    const double y = steps[i].label > 0.0f ? 1.0 : -1.0, weight = static_cast<double>(steps[i].weight);
    // The surrogate at the played prediction (the float reported), as Theorem 7 assumes.
    const AioliStep st = aioli_step(y * static_cast<double>(out[i].raw), y, 1.0 + opt_.radius * bound);
    const double k = weight * st.kappa, beta = weight * st.beta;
    if (!std::isfinite(k) || !std::isfinite(beta)) [[unlikely]] {
      ++safeguards_;
      continue;
    }
    kappa = std::max(kappa, k);
    step_beta_[i] = beta;
  }
  const std::span<const Coord> x(v.begin(), v.size());
  if (kappa > 0.0) shared_a_->rank_one_update(x, kappa);
  for (size_t i = 0; i < steps.size(); ++i)
    if (step_beta_[i] != 0.0) shared_b_[steps[i].problem].add(x, step_beta_[i]);
}

bool AioliKernelLearner::share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) {
  if (nystrom_) return false;
  points_.share(std::move(cache));
  return true;
}

bool AioliKernelLearner::share_points(uint32_t problems) {
  if (!nystrom_ || problems < 1) return false;
  inner_.clear();
  shared_a_.reset();
  shared_b_.clear();
  if (opt_.class_matrix == AioliKernelOptions::ClassMatrix::kShared && problems > 1) {
    shared_a_ = make_shared_matrix(opt_);
    for (uint32_t p = 0; p < problems; ++p) shared_b_.emplace_back(inner_bits(opt_.budget));
    return true;
  }
  for (uint32_t p = 0; p < problems; ++p) inner_.push_back(make_inner(opt_));
  return true;
}

void AioliKernelLearner::predict_problems(const Example& x, std::span<Prediction> out) const {
  nystrom_->embed(kernels::sorted_point(builder_.build(x), buffer_), psi_);
  const SparseVector& v = as_vector(psi_);
  if (shared_a_) {
    const double s = shared_solve(v);
    for (size_t p = 0; p < shared_b_.size() && p < out.size(); ++p)
      out[p] = output(shared_yhat(static_cast<uint32_t>(p), s, x.initial));
    return;
  }
  for (size_t p = 0; p < inner_.size() && p < out.size(); ++p)
    out[p] = output(inner_[p]->predict_vector(v, x.initial));
}

void AioliKernelLearner::learn_problems(const Example& x, std::span<const ProblemStep> steps,
                                        std::span<Prediction> out) {
  bool teaches = false;
  for (const ProblemStep& s : steps) {
    clip_.widen(s.label, s.label);
    teaches = teaches || s.weight > 0.0f;
  }
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  if (kernel_.pending() && teaches && v.size() > 0) kernel_.estimate_from(v);
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  if (teaches) return learn_budget(px, x.initial, steps, out);
  nystrom_->embed(px, psi_);
  if (shared_a_) {
    const double s = shared_solve(as_vector(psi_));
    for (size_t i = 0; i < steps.size(); ++i) out[i] = output(shared_yhat(steps[i].problem, s, x.initial));
    return;
  }
  for (size_t i = 0; i < steps.size(); ++i)
    out[i] = output(inner_[steps[i].problem]->predict_vector(as_vector(psi_), x.initial));
}

// Version 1: one problem; 2: K problems over one embedding (share_points); 3: the same with one class matrix.
// Then -b, the budget, the kernel, B, lambda, R (if given), the largest K(x, x), the seed, the rounds, the label
// range; then the embedding's state (--budget) or the exact form's.
template <class Self, class V>
void AioliKernelLearner::state(Self& self, V& v) {
  v.lines(
      [&self](std::ostream& out) { out << "learner " << self.name() << "\nR " << num(self.r()) << "\n"; });
  const uint32_t version = self.shared_a_           ? kSharedStateVersion
                           : self.inner_.size() > 1 ? kProblemsStateVersion
                                                    : kStateVersion;
  const std::string layout =
      "saved for another number of problems or the other --aioli_class_matrix, or not an aioli-kernel state";
  v.fixed("state version", version, layout);
  if (version != kStateVersion) v.fixed("problems", static_cast<uint32_t>(self.problems()), layout);
  v.fixed("bits", static_cast<uint32_t>(self.bits_), "saved with another -b");
  v.fixed("budget", self.opt_.budget, "saved with another --budget");
  v.part(
      "kernel", self.kernel_, [&self] { return common::KernelSetting(self.opt_.kernel); },
      [](std::ostream& out, const common::KernelSetting& k) { out << "kernel " << k.text() << "\n"; });
  AioliKernelOptions o = self.opt_;  // with the state's values, for the components it makes
  o.radius = v.number("aioli_B", self.opt_.radius, common::kPositive);
  o.lambda = v.number("aioli_lambda", *self.opt_.lambda, common::kPositive);  // resolved by the constructor
  o.r = v.optional("aioli_R", self.opt_.r, common::kNonNegative);
  v.number("largest_K", self.r2_max_, common::kNonNegative);
  v.whole("seed", self.seed_);
  v.whole("rounds", self.rounds_);
  v.clip(self.clip_);
  if (self.nystrom_)
    embedded_state(self, v, o);
  else
    exact_state(self, v);
}

// --budget: the embedding, then the shared class matrix and each problem's b, or each problem's inner learner
// (all made with the state's lambda).
template <class Self, class V>
void AioliKernelLearner::embedded_state(Self& self, V& v, const AioliKernelOptions& o) {
  v.part(
      "landmarks", self.nystrom_, [&self, o] { return self.make_nystrom(o); },
      [](std::ostream& out, const NystromEmbedding& e) { out << "landmarks " << e.size() << "\n"; });
  if (self.shared_a_) {
    v.part(
        "shared_matrix", self.shared_a_, [&self, o] { return self.make_shared_matrix(o); },
        [](std::ostream&, const Matrix&) {});
    for (size_t p = 0; p < self.shared_b_.size(); ++p) {
      v.lines([p](std::ostream& out) { out << "problem " << p << "\n"; });
      v.tracked("b", self.shared_b_[p], inner_bits(o.budget), [](double) { return true; });
    }
  }
  v.parts(
      "problem", self.inner_,
      [&self, o] {
        std::vector<std::unique_ptr<AioliLearner>> inner;
        for (size_t p = 0; p < self.inner_.size(); ++p) inner.push_back(self.make_inner(o));
        return inner;
      },
      [&self](std::ostream& out, size_t p, const AioliLearner& l) {
        if (self.inner_.size() > 1) out << "problem " << p << "\n";
        l.write_readable(out);
      });
}

// Exact form: the points, each one's kappa and beta, K beta as accumulated (a resumed run continues exactly;
// capacity at least 16) and N's inverse over the points.
template <class Self, class V>
void AioliKernelLearner::exact_state(Self& self, V& v) {
  const auto& points = common::points_part(v, self.points_);
  const uint64_t n = points.size();
  const auto w = v.columns(
      "point", n, [](const double* r) { return r[0] >= 0.0; }, self.kappa_, self.beta_);
  std::vector<double> roots(n);  // the square roots of the kappas
  for (uint64_t s = 0; s < n; ++s) roots[s] = std::sqrt((*w[0])[s]);
  v.derived(self.root_kappa_, std::move(roots));
  v.vector("K_beta", self.kbeta_, n, std::max<uint64_t>(n, 16));
  const auto& n_inv = v.part(
      "inverse", self.n_inv_, [] { return BorderedInverse(); }, [](std::ostream&, const BorderedInverse&) {});
  v.check(n_inv.size() == n, "the inverse's size differs from the points stored");
  v.lines([&self](std::ostream& out) {
    for (size_t i = 0; i < self.points_.size(); ++i) {
      out << "point " << i << " kappa " << num(self.kappa_[i]) << " beta " << num(self.beta_[i]) << " |";
      const kernels::PointRef p = self.points_[i];
      for (size_t k = 0; k < p.n; ++k) out << " " << p.data[k].slot << ":" << num(p.data[k].x);
      out << "\n";
    }
  });
}

void AioliKernelLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void AioliKernelLearner::load(ModelReader& in) { common::load_state(*this, in); }

uint64_t AioliKernelLearner::safeguard_count() const {
  uint64_t n = safeguards_;
  for (const auto& inner : inner_) n += inner->safeguard_count();
  return n;
}

std::vector<std::string> AioliKernelLearner::describe() const {
  const std::string n(name());
  return {
      n + " kernel = " + kernel_.text(), n + " B = " + common::number(opt_.radius),
      n + " lambda = " + common::number(opt_.ridge()) +
          (opt_.ridge() == 1.0 / (opt_.radius * opt_.radius) ? " (1/B^2)" : ""),
      n + " R = " + (opt_.r ? common::number(*opt_.r) : std::string("sqrt of the largest K(x, x) so far")),
      n + " budget = " +
          (opt_.budget > 0
               ? std::to_string(opt_.budget) + " landmarks (Nystrom embedding)" +
                     (shared_a_ ? ", one matrix for the " + std::to_string(problems()) + " classes"
                                : std::string())
               : std::string("none (exact: every example stored)"))};
}

std::vector<std::string> AioliKernelLearner::summary_lines() const {
  std::string line = std::string(name()) + " kernel = " + kernel_.text() + ", R = " + common::number(r());
  line += nystrom_ ? ", " + std::to_string(nystrom_->size()) + " landmarks (budget " +
                         std::to_string(opt_.budget) + ")"
                   : ", " + std::to_string(points_.size()) + " points stored";
  return {line};
}

void AioliKernelLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

LearnerRow aioli_kernel_row() {
  using Kind = OptionSpec::Kind;
  std::vector<OptionSpec> options = common::kernel_options();
  for (const OptionSpec& s : aioli_row().options)  // B and lambda as the primal learner declares them
    if (s.name == "aioli_B" || s.name == "aioli_lambda") options.push_back(s);
  options.push_back(
      {"aioli_R",
       "",
       Kind::kNumber,
       "",
       "bound on sqrt(K(x, x)), an example's norm in the kernel's feature space (default: the largest "
       "seen so far, saved in the model; 1 for rbf)",
       {0.0, kInf, true, false},
       {},
       {}});
  options.push_back(common::budget_option());
  options.push_back(
      {"aioli_class_matrix",
       "",
       Kind::kText,
       "shared",
       "with --oaa or --csoaa and --budget: one second-order matrix for all classes, A taking each example's "
       "largest curvature weight (per-class cost O(budget)), or per_class (K primal learners, O(budget^2) "
       "each); the kernel values are computed once per example either way",
       {},
       {"shared", "per_class"}});
  LearnerRow row;
  row.name = "aioli-kernel";
  row.help =
      "improper online logistic regression (AIOLI) in a kernel's feature space (linear, polynomial, "
      "Gaussian): "
      "non-linear classification; stores every example it learns from unless --budget; logistic loss only "
      "(Jezequel, Gaillard, Rudi 2020)";
  row.options = std::move(options);
  row.make = [](const LearnerContext& c) {
    return std::make_unique<AioliKernelLearner>(AioliKernelOptions::from(c.options), c.loss, c.bits,
                                                c.test_only, c.random_seed);
  };
  row.traits.losses = {"logistic"};
  row.traits.passes = false;  // every pass would store every example again
  row.traits.passes_with = "budget";
  row.traits.state_grows = true;
  row.numerics_test_cap = 400;
  return row;
}

}  // namespace lepus
