// kons and sketched-kons: see kons.h for the algorithm, the paper and its equations.
#include "learners/kons.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "learners/common/kernel_option.h"
#include "learners/common/plumbing.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 1;          // one problem
constexpr uint32_t kProblemsStateVersion = 2;  // K problems over one embedding (share_points)
constexpr double kLogisticClip = 5.0;
constexpr double kTinyTau = 1e-12;  // τ̃ is clamped at 1e-12 k_tt against cancellation (x in the span)
constexpr double kMaxMagnitude = 1e100;
constexpr uint64_t kLandmarkSalt = 0x5851F42D4C957F2Dull;  // the landmark coins' stream (--budget)

bool all_finite(const Eigen::VectorXd& v) { return v.size() == 0 || v.allFinite(); }

std::string num(double v) { return common::number(v, 17); }

// The logistic loss's defaults of --kons_eta and --kons_alpha (docs/algorithms/kons.md, "Defaults").
constexpr double kLogisticEta = 0.3;
constexpr double kLogisticAlpha = 0.3;
}  // namespace

KonsOptions KonsOptions::from(const OptionValues& v, bool sketched) {
  check_option_values((sketched ? sketched_kons_row() : kons_row()).options, v);
  KonsOptions o;
  o.sketched = sketched;
  o.kernel = common::kernel_params_of(v);
  if (v.has("kons_alpha")) o.alpha = v.number("kons_alpha");
  if (v.has("kons_C")) o.clip = v.number("kons_C");
  if (v.has("kons_eta")) o.eta = v.number("kons_eta");
  if (sketched) {
    if (v.has("kors_eps")) o.kors.eps = v.number("kors_eps");
    if (v.has("kors_beta")) o.kors.beta = v.number("kors_beta");
    if (v.has("kons_gamma")) o.gamma_min = v.number("kons_gamma");
  }
  o.budget = common::budget_of(v);
  if (v.has("kons_class_matrix") && v.text("kons_class_matrix") == "per_class")
    o.class_matrix = ClassMatrix::kPerClass;
  o.kors.alpha = o.alpha;
  return o;
}

KonsLearner::KonsLearner(const KonsOptions& options, const Loss& loss, int bits, uint64_t random_seed)
    : opt_(options), loss_(loss), bits_(bits), seed_(random_seed), kernel_(options.kernel), builder_(bits) {
  if (opt_.budget > 0)
    nystrom_ = std::make_unique<NystromEmbedding>(kernel_.kernel(), opt_.kors, opt_.budget);
  else if (opt_.sketched)
    kors_ = std::make_unique<Kors>(kernel_.kernel(), opt_.kors);
}

uint64_t KonsLearner::warmup_wanted() const {
  return kernel_.pending() && points_.size() == 0 && landmarks() == 0 ? common::kKernelWarmup : 0;
}

void KonsLearner::warmup(std::span<const Example> prefix) {
  if (warmup_wanted() == 0) return;
  kernel_.estimate(prefix, builder_);
}

double KonsLearner::clip_radius(size_t problem) const {
  if (opt_.clip) return *opt_.clip;
  if (loss_.name() == "squared") return std::max(max_abs_label_[problem], 1e-12);
  return kLogisticClip;
}

double KonsLearner::eta(size_t problem) const {
  if (opt_.eta) return *opt_.eta;
  const double c = clip_radius(problem);
  if (loss_.name() == "squared") return 1.0 / (8.0 * c * c);  // Assumption 2 with |y| <= C
  // Logistic: 0.3, measured (docs/algorithms/kons.md, "Defaults"), not the curvature at C (e^-C/(1+C) =
  // 0.0011 at C = 5), which made the preconditioner almost αI and the learner a kernel SGD with step 1/α.
  return kLogisticEta;
}

double KonsLearner::uniform(uint64_t round) const {
  if (!uniforms_.empty()) return uniforms_[round % uniforms_.size()];
  return common::hashed_uniform(seed_, round);
}

double KonsLearner::score(kernels::PointRef x) const {
  const size_t t = points_.size();
  kv_.resize(static_cast<Eigen::Index>(t));
  points_.row(kernel_.kernel(), x, kv_.data());
  double y = 0.0;
  for (size_t s = 0; s < t; ++s)
    y += a_[s] * kv_(static_cast<Eigen::Index>(s));  // in order: any thread count
  return y;
}

Prediction KonsLearner::output(double ytilde, size_t problem) const {
  const double c = clip_radius(problem);
  return Prediction{common::to_float(ytilde, safeguards_),
                    common::to_float(std::clamp(ytilde, -c, c), safeguards_)};
}

// ỹ of a problem on ψ = kv_ (--budget).
double KonsLearner::embedded_score(size_t problem, double initial) const {
  const Eigen::Index m = kv_.size();
  return initial + (m > 0 ? u_[problem].head(m).dot(kv_) : 0.0);
}

Prediction KonsLearner::predict(const Example& x) const {
  const SparseVector& v = builder_.build(x, VectorBuilder::Order::kSlot);
  if (!nystrom_) return output(x.initial + score(kernels::sorted_point(v, buffer_)), 0);
  nystrom_->embed(kernels::sorted_point(v, buffer_), kv_);
  return output(embedded_score(0, x.initial), 0);
}

bool KonsLearner::share_points(uint32_t problems) {
  if (!nystrom_ || problems < 1) return false;
  u_.assign(problems, Eigen::VectorXd());
  ainv_.assign(opt_.class_matrix == KonsOptions::ClassMatrix::kShared ? 1 : problems, Eigen::MatrixXd());
  max_abs_label_.assign(problems, 0.0);
  return true;
}

bool KonsLearner::share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) {
  if (nystrom_) return false;
  if (kors_) kors_->share_kernel_rows(cache);
  points_.share(std::move(cache));
  return true;
}

void KonsLearner::predict_problems(const Example& x, std::span<Prediction> out) const {
  const SparseVector& v = builder_.build(x, VectorBuilder::Order::kSlot);
  nystrom_->embed(kernels::sorted_point(v, buffer_), kv_);
  for (size_t p = 0; p < u_.size() && p < out.size(); ++p) out[p] = output(embedded_score(p, x.initial), p);
}

// --budget: the problems of one example (one under learn(), or K: share_points). The point is embedded (and
// offered as a landmark, when a step teaches) once, then each step is its problem's ONS step on the same ψ,
// in order.
void KonsLearner::learn_problems(const Example& x, std::span<const ProblemStep> steps,
                                 std::span<Prediction> out) {
  const SparseVector& v = builder_.build(x, VectorBuilder::Order::kSlot);
  safeguards_ += v.dropped;
  if (kernel_.pending() && v.size() > 0) kernel_.estimate_from(v);
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  bool teaches = false;
  for (const ProblemStep& s : steps) teaches = teaches || s.weight > 0.0f;
  const uint64_t round = rounds_;
  embed(px, teaches, round);
  bool learned = false;
  for (const ProblemStep& s : steps)
    if (loss_.name() == "squared")
      max_abs_label_[s.problem] = std::max(max_abs_label_[s.problem], std::fabs(double(s.label)));
  if (ainv_.size() == 1 && u_.size() > 1) {
    shared_matrix_steps(x.initial, steps, round, out, learned);
  } else {
    for (size_t i = 0; i < steps.size(); ++i)
      out[i] = embedded_step(steps[i].problem, x.initial, steps[i].label, steps[i].weight, round, learned);
  }
  if (learned) ++rounds_;
}

Prediction KonsLearner::learn(const Example& x) {
  if (nystrom_) {  // one problem's step (an unlabeled label counts as 0: it raises no default C)
    const ProblemStep step{0, x.labeled ? x.label : 0.0f, common::teaches(x) ? x.weight : 0.0f};
    Prediction out;
    learn_problems(x, {&step, 1}, {&out, 1});
    return out;
  }
  const SparseVector& v = builder_.build(x, VectorBuilder::Order::kSlot);
  safeguards_ += v.dropped;
  if (x.labeled && loss_.name() == "squared")
    max_abs_label_[0] = std::max(max_abs_label_[0], std::fabs(double(x.label)));
  // No warm-up (a caller that is not the driver): the distance from the first point to the origin.
  if (kernel_.pending() && v.size() > 0) kernel_.estimate_from(v);
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  const double c = clip_radius(0);
  Round r;
  r.ytilde = score(px) + x.initial;
  r.yhat = std::clamp(r.ytilde, -c, c);
  const Prediction out{common::to_float(r.ytilde, safeguards_), common::to_float(r.yhat, safeguards_)};
  last_ = r;
  if (!common::teaches(x) || !std::isfinite(r.ytilde)) return out;
  const uint64_t round = rounds_++;
  const double h = r.ytilde - r.yhat;
  // ġ at the clipped prediction, times the importance weight.
  r.gdot = static_cast<double>(x.weight) *
           loss_.first_derivative(static_cast<float>(r.yhat), x.label, LabelRange{});
  const double et = eta(0);
  // τ̃ = (k_tt - k̂ᵀN⁻¹k̂)/α over the sketch's rows.
  const double ktt = kernel_.kernel().self(px);
  const auto n = static_cast<Eigen::Index>(act_.size());
  kh_.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) kh_(i) = std::sqrt(gamma_[act_[i]]) * kv_(act_[i]);
  n_inv_.solve(kh_, v_);
  r.tau = std::max((ktt - (n > 0 ? kh_.dot(v_) : 0.0)) / opt_.alpha, kTinyTau * ktt);
  bool in_sketch = true;
  if (kors_) {  // Algorithm 3: KORS on the rescaled point ġ√η φ, coupled coins
    const double u = uniform(round);
    const double d = r.gdot * std::sqrt(et);
    const Kors::Step k = kors_->step(px, d, u);
    r.kors_tau = k.tau;
    r.kors_p = k.p;
    r.kors_kept = k.kept;
    in_sketch = u < std::max(k.p, opt_.gamma_min);
  }
  r.sketched_in = in_sketch;
  r.gamma = in_sketch ? et * r.gdot * r.gdot : 0.0;
  r.beta = r.gamma * r.yhat - (h != 0.0 ? h / r.tau : 0.0) - r.gdot;
  last_ = r;
  // A round whose numbers leave [-1e100, 1e100] (hostile labels or values: |ġ| is unbounded for a logistic
  // label of 1e30) is skipped and counted: the products and sums of such numbers over the stored points stay
  // finite.
  const bool sane = std::fabs(r.gamma) * ktt <= kMaxMagnitude &&
                    std::fabs(r.beta) * std::sqrt(ktt) <= kMaxMagnitude && ktt <= kMaxMagnitude &&
                    (all_finite(kv_));
  if (!sane || !std::isfinite(r.gamma) || !std::isfinite(r.beta) || !(r.tau > 0.0)) {
    ++safeguards_;
    return out;
  }
  if (r.gamma == 0.0 && r.beta == 0.0) return out;  // no effect: nothing stored
  const size_t s = points_.size();
  for (Eigen::Index i = 0; i < n; ++i) kbeta_(i) += kv_(act_[i]) * r.beta;
  if (r.gamma > 0.0) {
    const double cg = std::sqrt(r.gamma);
    v_ *= cg;
    n_inv_.border(v_, opt_.alpha * (1.0 + r.gamma * r.tau));
    double kb = ktt * r.beta;
    for (size_t j = 0; j < s; ++j) kb += kv_(static_cast<Eigen::Index>(j)) * beta_[j];
    kbeta_.conservativeResize(n + 1);
    kbeta_(n) = kb;
    act_.push_back(static_cast<uint32_t>(s));
  }
  points_.add(px);
  beta_.push_back(r.beta);
  gamma_.push_back(r.gamma);
  refresh_coefficients();
  return out;
}

// --budget: ONS with the clipping projection on ψ(x) (the primal form of eq. (1) on the Nyström features):
//     ỹ = uᵀψ,  ŷ = clip(ỹ),  v = A⁻¹ψ,  τ̃ = ψᵀv,  w = u - ((ỹ - ŷ)/τ̃) v,
//     γ = η ġ²,  A⁻¹ -= γ/(1 + γτ̃) v vᵀ (Sherman-Morrison),  u = w - ġ v/(1 + γτ̃).
// sketched-kons gates γ with its coin, at the exact ridge leverage of the rescaled point in this space,
// γτ̃/(1 + γτ̃), floored at --kons_gamma. O(B·nnz + B²) per example, B the budget.
//
// ψ(x) into kv_. When x teaches, it is offered as a landmark before it is learned from (the choice depends on
// x alone), so its own direction is in the span: a new coordinate enters every problem with the prior (A⁻¹
// gains 1/α on its diagonal, u a 0).
void KonsLearner::embed(kernels::PointRef px, bool offer, uint64_t round) {
  Eigen::VectorXd& psi = kv_;
  nystrom_->embed(px, psi);
  if (!offer || !nystrom_->offer(px, psi, common::hashed_uniform(seed_ ^ kLandmarkSalt, round))) return;
  add_coordinate(psi.size());
}

// Coordinate n - 1 enters every problem with the prior: A⁻¹ gains 1/α on its diagonal, u a 0. Capacities
// double (up to the budget).
void KonsLearner::add_coordinate(Eigen::Index n) {
  const Eigen::Index m = n - 1;
  auto capacity = [&](Eigen::Index size) {
    return std::min<Eigen::Index>(std::max<Eigen::Index>(16, 2 * size),
                                  static_cast<Eigen::Index>(opt_.budget));
  };
  for (Eigen::MatrixXd& a : ainv_) {
    if (a.rows() < n) {
      Eigen::MatrixXd bigger = Eigen::MatrixXd::Zero(capacity(a.rows()), capacity(a.rows()));
      bigger.topLeftCorner(m, m) = a.topLeftCorner(m, m);
      a.swap(bigger);
    }
    a.col(m).head(m).setZero();
    a(m, m) = 1.0 / opt_.alpha;
  }
  for (Eigen::VectorXd& u : u_) {
    if (u.size() < n) {
      Eigen::VectorXd bigger = Eigen::VectorXd::Zero(capacity(u.size()));
      bigger.head(m) = u.head(m);
      u.swap(bigger);
    }
    u(m) = 0.0;
  }
}

// One problem's step on ψ = kv_ (label and weight its own; weight 0 only predicts); `learned` is set when the
// step counts as a round.
Prediction KonsLearner::embedded_step(size_t problem, double initial, float label, float weight,
                                      uint64_t round, bool& learned) {
  Eigen::MatrixXd& ainv = ainv_[problem];
  Eigen::VectorXd& u = u_[problem];
  const Eigen::VectorXd& psi = kv_;
  const double c = clip_radius(problem);
  const auto m = psi.size();
  Round r;
  r.ytilde = embedded_score(problem, initial);
  r.yhat = std::clamp(r.ytilde, -c, c);
  const Prediction out = output(r.ytilde, problem);
  last_ = r;
  if (!(weight > 0.0f) || !std::isfinite(r.ytilde) || !psi.allFinite()) return out;
  learned = true;
  const double h = r.ytilde - r.yhat;
  r.gdot =
      static_cast<double>(weight) * loss_.first_derivative(static_cast<float>(r.yhat), label, LabelRange{});
  v_.resize(m);
  if (m > 0) v_.noalias() = ainv.topLeftCorner(m, m).selfadjointView<Eigen::Upper>() * psi;
  r.tau = m > 0 ? psi.dot(v_) : 0.0;
  const double gamma = eta(problem) * r.gdot * r.gdot;
  bool in_sketch = true;
  if (opt_.sketched) {
    const double lev = gamma * r.tau / (1.0 + gamma * r.tau);
    in_sketch = uniform(round) < std::max(std::min(opt_.kors.beta * lev, 1.0), opt_.gamma_min);
  }
  r.sketched_in = in_sketch;
  r.gamma = in_sketch ? gamma : 0.0;
  const double den = 1.0 + r.gamma * r.tau;
  const double shift = h != 0.0 && r.tau > 0.0 ? h / r.tau : 0.0;
  last_ = r;
  if (!std::isfinite(r.gamma) || !std::isfinite(den) || std::fabs(r.gamma) * r.tau > kMaxMagnitude ||
      std::fabs(r.gdot) > kMaxMagnitude || !std::isfinite(shift)) {
    ++safeguards_;
    return out;
  }
  if (m > 0) {
    u.head(m) -= (shift + r.gdot / den) * v_;  // w = u - shift v, then u = w - ġ v/den
    if (r.gamma > 0.0)
      ainv.topLeftCorner(m, m).selfadjointView<Eigen::Upper>().rankUpdate(v_, -r.gamma / den);
  }
  return out;
}

// --kons_class_matrix shared: the K problems share A. Every step of the example is a gradient at the
// example's start; v = A⁻¹ψ and τ̃ are computed once, A takes the largest of the steps' γ (so it dominates the
// matrix each problem would build alone: docs/algorithms/kons.md, "Classes"), and each problem moves u by its
// own ġ and shift. Per example O(B²) once and O(B) per problem.
void KonsLearner::shared_matrix_steps(double initial, std::span<const ProblemStep> steps, uint64_t round,
                                      std::span<Prediction> out, bool& learned) {
  const Eigen::VectorXd& psi = kv_;
  const auto m = psi.size();
  v_.resize(m);
  if (m > 0) v_.noalias() = ainv_[0].topLeftCorner(m, m).selfadjointView<Eigen::Upper>() * psi;
  const double tau = m > 0 ? psi.dot(v_) : 0.0;
  step_rounds_.assign(steps.size(), {Round{}, false});
  double gamma = 0.0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const ProblemStep& s = steps[i];
    Round& r = step_rounds_[i].first;
    const double c = clip_radius(s.problem);
    r.ytilde = embedded_score(s.problem, initial);
    r.yhat = std::clamp(r.ytilde, -c, c);
    out[i] = output(r.ytilde, s.problem);
    if (!(s.weight > 0.0f) || !std::isfinite(r.ytilde) || !psi.allFinite()) continue;
    learned = step_rounds_[i].second = true;
    r.gdot = static_cast<double>(s.weight) *
             loss_.first_derivative(static_cast<float>(r.yhat), s.label, LabelRange{});
    r.tau = tau;
    gamma = std::max(gamma, eta(s.problem) * r.gdot * r.gdot);
  }
  if (opt_.sketched) {
    const double lev = gamma * tau / (1.0 + gamma * tau);
    if (!(uniform(round) < std::max(std::min(opt_.kors.beta * lev, 1.0), opt_.gamma_min))) gamma = 0.0;
  }
  const double den = 1.0 + gamma * tau;
  if (!std::isfinite(gamma) || !std::isfinite(den) || gamma * tau > kMaxMagnitude) {
    ++safeguards_;
    return;
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    Round& r = step_rounds_[i].first;
    r.gamma = gamma;
    r.sketched_in = gamma > 0.0;
    last_ = r;
    if (!step_rounds_[i].second) continue;
    const double shift = r.ytilde != r.yhat && tau > 0.0 ? (r.ytilde - r.yhat) / tau : 0.0;
    if (std::fabs(r.gdot) > kMaxMagnitude || !std::isfinite(shift)) {
      ++safeguards_;
      continue;
    }
    if (m > 0) u_[steps[i].problem].head(m) -= (shift + r.gdot / den) * v_;
  }
  if (m > 0 && gamma > 0.0)
    ainv_[0].topLeftCorner(m, m).selfadjointView<Eigen::Upper>().rankUpdate(v_, -gamma / den);
}

// a = (β - Γ^½ N⁻¹ Γ^½ Kβ)/α.
void KonsLearner::refresh_coefficients() {
  const auto n = static_cast<Eigen::Index>(act_.size());
  e_.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) e_(i) = std::sqrt(gamma_[act_[i]]) * kbeta_(i);
  n_inv_.solve(e_, r_);
  a_.resize(beta_.size());
  for (size_t s = 0; s < beta_.size(); ++s) a_[s] = beta_[s] / opt_.alpha;
  for (Eigen::Index i = 0; i < n; ++i) a_[act_[i]] -= std::sqrt(gamma_[act_[i]]) * r_(i) / opt_.alpha;
}

// Version 1: one problem; 2: K problems over one embedding (share_points), with whether they share one matrix.
// Then the kernel, the hyper-parameters (C and eta 0 when not given), the largest |label| per problem, the
// points with their beta, gamma and coefficient, K beta over the points with gamma > 0, N's inverse, and KORS
// (sketched) or the embedding with each problem's inverse and u (--budget).
template <class Self, class V>
void KonsLearner::state(Self& self, V& v) {
  const bool many = self.u_.size() > 1;
  v.lines([&self](std::ostream& out) {
    out << "learner " << self.name() << "\nC " << num(self.clip_radius(0)) << "\neta " << num(self.eta(0))
        << "\n";
  });
  const std::string problems = "saved for another number of problems, or not a kons state";
  v.fixed("state version", many ? kProblemsStateVersion : kStateVersion, problems);
  if (many) {
    v.fixed("problems", static_cast<uint32_t>(self.u_.size()), problems);
    v.fixed("one matrix", static_cast<uint8_t>(self.ainv_.size() == 1),
            "saved with the other --kons_class_matrix");
  }
  v.fixed("sketched", static_cast<uint8_t>(self.opt_.sketched), "saved by the other kons learner");
  v.fixed("bits", static_cast<uint32_t>(self.bits_), "saved with another -b");
  v.part(
      "kernel", self.kernel_, [&self] { return common::KernelSetting(self.opt_.kernel); },
      [](std::ostream& out, const common::KernelSetting& k) { out << "kernel " << k.text() << "\n"; });
  const KonsOptions o = options_state(self, v);
  v.fixed("budget", self.opt_.budget, "saved with another --budget");
  v.whole("seed", self.seed_);
  v.whole("rounds", self.rounds_);
  for (auto& largest : self.max_abs_label_) v.number("largest_label", largest, common::kNonNegative);
  points_state(self, v);
  if (o.budget > 0)
    embedded_state(self, v, o);
  else if (o.sketched)
    v.part(
        "kors", self.kors_, [&self, o] { return std::make_unique<Kors>(self.kernel_.kernel(), o.kors); },
        [](std::ostream& out, const Kors& k) { out << "dictionary " << k.size() << "\n"; });
  v.lines([&self](std::ostream& out) { self.write_points(out); });
}

// The hyper-parameters (C and eta 0 when not given): the options with the state's values, for the components
// the state makes.
template <class Self, class V>
KonsOptions KonsLearner::options_state(Self& self, V& v) {
  KonsOptions o = self.opt_;
  o.alpha = o.kors.alpha = v.number("kons_alpha", self.opt_.alpha, common::kPositive);
  v.derived(self.opt_.kors.alpha, o.alpha);
  const double clip = v.zero_if_absent("kons_C", self.opt_.clip, common::kNonNegative);
  const double eta = v.zero_if_absent("kons_eta", self.opt_.eta, common::kNonNegative);
  o.clip = clip != 0.0 ? std::optional<double>(clip) : std::nullopt;
  o.eta = eta != 0.0 ? std::optional<double>(eta) : std::nullopt;
  o.kors.eps = v.number("kors_eps", self.opt_.kors.eps);
  o.kors.beta = v.number("kors_beta", self.opt_.kors.beta);
  v.number("kons_gamma", self.opt_.gamma_min, common::Bounds{{0.0, 1.0}});
  return o;
}

// The points with their beta, gamma and coefficient, K beta over the points with gamma > 0 (as accumulated: a
// resumed run continues exactly) and N's inverse over those points.
template <class Self, class V>
void KonsLearner::points_state(Self& self, V& v) {
  const auto& points = common::points_part(v, self.points_);
  const uint64_t n = points.size();
  const auto w = v.columns(
      "point", n, [](const double* r) { return r[1] >= 0.0; }, self.beta_, self.gamma_, self.a_);
  std::vector<uint32_t> act;  // the rows of N: the points with gamma > 0
  for (uint64_t s = 0; s < n; ++s)
    if ((*w[1])[s] > 0.0) act.push_back(static_cast<uint32_t>(s));
  const uint64_t active = act.size();
  v.derived(self.act_, std::move(act));
  v.vector("K_beta", self.kbeta_, active, active);
  const auto& n_inv = v.part(
      "inverse", self.n_inv_, [] { return BorderedInverse(); },
      [](std::ostream& out, const BorderedInverse& b) { out << "sketch " << b.size() << "\n"; });
  v.check(n_inv.size() == active, "the inverse's size differs from the points with gamma > 0");
}

// --budget: the embedding (made with the state's KORS options), each problem's A inverse and u over its
// coordinates (their capacity at least 1).
template <class Self, class V>
void KonsLearner::embedded_state(Self& self, V& v, const KonsOptions& o) {
  const auto& nystrom = v.part(
      "landmarks", self.nystrom_,
      [&self, o] { return std::make_unique<NystromEmbedding>(self.kernel_.kernel(), o.kors, o.budget); },
      [](std::ostream& out, const NystromEmbedding& e) { out << "landmarks " << e.size() << "\n"; });
  const uint64_t m = nystrom.size(), cap = std::max<uint64_t>(m, 1);
  for (auto& a : self.ainv_) v.upper("inverse", a, m, cap);
  for (auto& u : self.u_) v.vector("u", u, m, cap);
  v.lines([&self](std::ostream& out) { self.write_u(out); });
}

void KonsLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void KonsLearner::load(ModelReader& in) { common::load_state(*this, in); }

void KonsLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

// Each problem's u, one line per coordinate ("problem p C c" first when there are several).
void KonsLearner::write_u(std::ostream& out) const {
  for (size_t p = 0; p < u_.size(); ++p) {
    if (u_.size() > 1) out << "problem " << p << " C " << num(clip_radius(p)) << "\n";
    for (size_t j = 0; j < nystrom_->size(); ++j)
      out << "u " << j << " " << num(u_[p](static_cast<Eigen::Index>(j))) << "\n";
  }
}

void KonsLearner::write_points(std::ostream& out) const {
  for (size_t s = 0; s < points_.size(); ++s) {
    out << "point " << s << " a " << num(a_[s]) << " beta " << num(beta_[s]) << " gamma " << num(gamma_[s])
        << " |";
    const kernels::PointRef p = points_[s];
    for (size_t k = 0; k < p.n; ++k) out << " " << p.data[k].slot << ":" << num(p.data[k].x);
    out << "\n";
  }
}

std::vector<std::string> KonsLearner::summary_lines() const {
  if (nystrom_)
    return {std::string(name()) + " kernel = " + kernel_.text() + ", " + std::to_string(nystrom_->size()) +
            " landmarks (budget " + std::to_string(opt_.budget) + ")"};
  return {std::string(name()) + " kernel = " + kernel_.text() + ", " + std::to_string(points_.size()) +
          " points stored" + (kors_ ? ", " + std::to_string(act_.size()) + " in the sketch" : std::string())};
}

std::vector<std::string> KonsLearner::describe() const {
  std::vector<std::string> out;
  const std::string n(name());
  out.push_back(n + " kernel = " + kernel_.text());
  out.push_back(n + " alpha = " + common::number(opt_.alpha));
  out.push_back(n + " budget = " +
                (opt_.budget > 0 ? std::to_string(opt_.budget) + " landmarks (Nystrom embedding)"
                                 : std::string("none (exact: every example stored)")));
  out.push_back(n + " C = " +
                (opt_.clip                   ? common::number(*opt_.clip)
                 : loss_.name() == "squared" ? std::string("largest |label| (online)")
                                             : common::number(kLogisticClip)));
  out.push_back(n + " eta = " +
                (opt_.eta                    ? common::number(*opt_.eta)
                 : loss_.name() == "squared" ? std::string("1/(8C^2), the loss's curvature at C")
                                             : common::number(kLogisticEta)));
  if (opt_.sketched) {
    out.push_back(n + " KORS epsilon = " + common::number(opt_.kors.eps) + ", beta = " +
                  common::number(opt_.kors.beta) + ", coin floor = " + common::number(opt_.gamma_min));
  }
  return out;
}

namespace {

std::vector<OptionSpec> kons_options(bool sketched) {
  using Kind = OptionSpec::Kind;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<OptionSpec> o = common::kernel_options();
  std::vector<OptionSpec> own = {
      {"kons_alpha",
       "",
       Kind::kNumber,
       "",
       "ridge regularizer of the second-order step (default: 1 for squared loss, 0.3 for logistic)",
       {0.0, kInf, true, false}},
      {"kons_C",
       "",
       Kind::kNumber,
       "",
       "predictions are clipped to [-C, C] (default: the largest |label| seen for squared loss, 5 for "
       "logistic)",
       {0.0, kInf, true, false}},
      {"kons_eta",
       "",
       Kind::kNumber,
       "",
       "step-size weight of each gradient in the preconditioner (default: the squared loss's curvature at C, "
       "1/(8C^2); 0.3 for logistic)",
       {0.0, kInf, true, false}},
  };
  o.insert(o.end(), own.begin(), own.end());
  o.push_back(common::budget_option());
  o.push_back(
      {"kons_class_matrix",
       "",
       Kind::kText,
       "shared",
       "with --oaa or --csoaa and --budget: one second-order matrix for all classes, A taking each example's "
       "largest gradient weight (per-class cost O(budget)), or per_class (K exact kons learners, O(budget^2) "
       "each); the kernel values are computed once per example either way",
       {},
       {"shared", "per_class"}});
  if (sketched) {
    o.push_back({"kors_eps",
                 "",
                 Kind::kNumber,
                 "0.5",
                 "accuracy of the leverage-score sampler",
                 {0.0, 1.0, true, true}});
    o.push_back(
        {"kors_beta",
         "",
         Kind::kNumber,
         "30",
         "oversampling of the leverage-score sampler: a point is kept with probability min(beta x score, 1)",
         {0.0, kInf, true, false}});
    o.push_back({"kons_gamma",
                 "",
                 Kind::kNumber,
                 "0.1",
                 "smallest probability that a gradient enters the sketch (1: exact kons)",
                 {0.0, 1.0, false, false}});
  }
  return o;
}

LearnerRow make_row(bool sketched) {
  LearnerRow row{
      sketched ? "sketched-kons" : "kons",
      sketched
          ? "kernel online Newton step whose second-order matrix keeps only the gradients a leverage-score "
            "sampler picks: cheaper learning updates, prediction still over every stored point"
          : "kernel online Newton step: second-order learning in a kernel's feature space (linear, "
            "polynomial, "
            "Gaussian); stores every example it learns from, so its cost grows with the stream",
      kons_options(sketched), [sketched](const LearnerContext& c) {
        KonsOptions o = KonsOptions::from(c.options, sketched);
        if (!c.options.has("kons_alpha") && c.loss.name() == "logistic")
          o.alpha = o.kors.alpha = kLogisticAlpha;
        if (!c.options.has("bandwidth_factor") && c.loss.name() == "logistic")
          o.kernel.median_factor = common::kClassificationBandwidthFactor;
        return std::make_unique<KonsLearner>(o, c.loss, c.bits, c.random_seed);
      }};
  row.traits.losses = {"squared", "logistic"};
  row.traits.passes = false;  // every pass would store every example again
  row.traits.passes_with = "budget";
  row.traits.state_grows = true;
  row.numerics_test_cap = 400;
  return row;
}

}  // namespace

LearnerRow kons_row() { return make_row(false); }
LearnerRow sketched_kons_row() { return make_row(true); }

}  // namespace lepus
