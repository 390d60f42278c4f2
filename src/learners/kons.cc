// kons and sketched-kons: see kons.h for the algorithm, the paper and its equations.
#include "learners/kons.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "learners/common/kernel_option.h"
#include "learners/common/plumbing.h"
#include "lepus/errors.h"
#include "sketch/dense_io.h"

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

void KonsLearner::save(ModelWriter& out) const {
  const bool many = u_.size() > 1;
  out.put_u32(many ? kProblemsStateVersion : kStateVersion);
  if (many) {
    out.put_u32(static_cast<uint32_t>(u_.size()));
    out.put_u8(ainv_.size() == 1 ? 1 : 0);  // one matrix for the K problems
  }
  out.put_u8(opt_.sketched ? 1 : 0);
  out.put_u32(static_cast<uint32_t>(bits_));
  kernel_.save(out);  // the kernel, then where its bandwidth came from (0: still to estimate)
  out.put_f64(opt_.alpha);
  out.put_f64(opt_.clip.value_or(0.0));
  out.put_f64(opt_.eta.value_or(0.0));
  out.put_f64(opt_.kors.eps);
  out.put_f64(opt_.kors.beta);
  out.put_f64(opt_.gamma_min);
  out.put_u64(opt_.budget);
  out.put_u64(seed_);
  out.put_u64(rounds_);
  out.put_values(max_abs_label_.data(), max_abs_label_.size());
  points_.save(out);
  for (size_t s = 0; s < beta_.size(); ++s) {
    out.put_f64(beta_[s]);
    out.put_f64(gamma_[s]);
    out.put_f64(a_[s]);
  }
  out.put_values(kbeta_.data(), static_cast<size_t>(kbeta_.size()));  // Kβ, as accumulated (resumes exactly)
  n_inv_.save(out);
  if (kors_) kors_->save(out);
  if (nystrom_) {
    nystrom_->save(out);
    for (const Eigen::MatrixXd& a : ainv_) dense_io::put_upper(out, a, nystrom_->size());
    for (const Eigen::VectorXd& u : u_) out.put_values(u.data(), nystrom_->size());
  }
}

void KonsLearner::load(ModelReader& in) {
  const std::string who(name());
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": " + who + " state: " + what);
  };
  const uint32_t version = in.get_u32("kons state version");
  if (version != kStateVersion && version != kProblemsStateVersion) throw bad("unknown state version");
  const uint32_t problems = version == kStateVersion ? 1 : in.get_u32("kons problems");
  if (problems != u_.size())
    throw bad("saved for " + std::to_string(problems) + " problems, not " + std::to_string(u_.size()));
  const size_t matrices = version == kStateVersion || in.get_u8("kons one matrix") == 0 ? problems : 1;
  if (matrices != ainv_.size()) throw bad("saved with the other --kons_class_matrix");
  if ((in.get_u8("kons sketched") != 0) != opt_.sketched) throw bad("saved by the other kons learner");
  if (in.get_u32("kons bits") != static_cast<uint32_t>(bits_)) throw bad("saved with another -b");
  common::KernelSetting kernel(opt_.kernel);
  kernel.load(in, who);
  KonsOptions o = opt_;
  o.alpha = in.get_f64("kons alpha");
  const double clip = in.get_f64("kons C"), eta = in.get_f64("kons eta");
  o.clip = clip > 0.0 ? std::optional<double>(clip) : std::nullopt;
  o.eta = eta > 0.0 ? std::optional<double>(eta) : std::nullopt;
  o.kors.eps = in.get_f64("kors eps");
  o.kors.beta = in.get_f64("kors beta");
  o.gamma_min = in.get_f64("kons gamma");
  if (in.get_u64("kons budget") != opt_.budget) throw bad("saved with another --budget");
  o.kors.alpha = o.alpha;
  if (!(o.alpha > 0.0) || !std::isfinite(o.alpha) || !(clip >= 0.0) || !(eta >= 0.0) ||
      !std::isfinite(clip) || !std::isfinite(eta) || !(o.gamma_min >= 0.0 && o.gamma_min <= 1.0))
    throw bad("a hyper-parameter out of range");
  const uint64_t seed = in.get_u64("kons seed");
  const uint64_t rounds = in.get_u64("kons rounds");
  std::vector<double> max_abs_label(problems);
  for (double& l : max_abs_label) l = in.get_f64("kons largest label");
  kernels::PointStore points;
  points.load(in, who);
  std::vector<double> beta(points.size()), gamma(points.size()), a(points.size());
  std::vector<uint32_t> act;
  for (size_t s = 0; s < points.size(); ++s) {
    beta[s] = in.get_f64("kons beta");
    gamma[s] = in.get_f64("kons gamma");
    a[s] = in.get_f64("kons coefficient");
    if (!std::isfinite(beta[s]) || !(gamma[s] >= 0.0) || !std::isfinite(gamma[s]) || !std::isfinite(a[s]))
      throw bad("a point's weights");
    if (gamma[s] > 0.0) act.push_back(static_cast<uint32_t>(s));
  }
  Eigen::VectorXd kbeta(static_cast<Eigen::Index>(act.size()));
  for (Eigen::Index i = 0; i < kbeta.size(); ++i) {
    kbeta(i) = in.get_f64("kons K beta");
    if (!std::isfinite(kbeta(i))) throw bad("a non-finite K beta");
  }
  BorderedInverse n_inv;
  n_inv.load(in, who);
  if (n_inv.size() != act.size()) throw bad("the inverse's size differs from the points with gamma > 0");
  std::unique_ptr<Kors> kors;
  std::unique_ptr<NystromEmbedding> nystrom;
  std::vector<Eigen::MatrixXd> ainv(matrices);
  std::vector<Eigen::VectorXd> u(problems);
  opt_ = o;
  kernel_ = std::move(kernel);  // the kernel object keeps its address: KORS's and the embedding's reference
  if (opt_.budget > 0) {
    nystrom = std::make_unique<NystromEmbedding>(kernel_.kernel(), opt_.kors, opt_.budget);
    nystrom->load(in, who);
    const auto m = static_cast<Eigen::Index>(nystrom->size());
    const Eigen::Index cap = std::max<Eigen::Index>(m, 1);
    for (Eigen::MatrixXd& a : ainv) {
      a = Eigen::MatrixXd::Zero(cap, cap);
      dense_io::get_upper(in, a, static_cast<uint64_t>(m), "kons inverse");
      if (!a.allFinite()) throw bad("a non-finite embedded state");
    }
    for (Eigen::VectorXd& v : u) {
      v = Eigen::VectorXd::Zero(cap);
      in.get_raw(v.data(), static_cast<size_t>(m) * sizeof(double), "kons u");
      if (!v.allFinite()) throw bad("a non-finite embedded state");
    }
  } else if (opt_.sketched) {
    kors = std::make_unique<Kors>(kernel_.kernel(), opt_.kors);
    kors->load(in, who);
  }
  seed_ = seed;
  rounds_ = rounds;
  max_abs_label_.swap(max_abs_label);
  points_.assign(std::move(points));
  beta_.swap(beta);
  gamma_.swap(gamma);
  act_.swap(act);
  n_inv_ = std::move(n_inv);
  kors_ = std::move(kors);
  nystrom_ = std::move(nystrom);
  ainv_.swap(ainv);
  u_.swap(u);
  a_.swap(a);
  kbeta_.swap(kbeta);
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

void KonsLearner::write_readable(std::ostream& out) const {
  out << "learner " << name() << "\nkernel " << kernel_.text() << "\n";
  out << "alpha " << num(opt_.alpha) << "\nC " << num(clip_radius(0)) << "\neta " << num(eta(0)) << "\n";
  out << "rounds " << rounds_ << "\npoints " << points_.size() << "\nsketch " << act_.size() << "\n";
  if (kors_) out << "dictionary " << kors_->size() << "\n";
  if (nystrom_) {
    out << "landmarks " << nystrom_->size() << "\n";
    for (size_t p = 0; p < u_.size(); ++p) {
      if (u_.size() > 1) out << "problem " << p << " C " << num(clip_radius(p)) << "\n";
      for (size_t j = 0; j < nystrom_->size(); ++j)
        out << "u " << j << " " << num(u_[p](static_cast<Eigen::Index>(j))) << "\n";
    }
  }
  for (size_t s = 0; s < points_.size(); ++s) {
    out << "point " << s << " a " << num(a_[s]) << " beta " << num(beta_[s]) << " gamma " << num(gamma_[s])
        << " |";
    const kernels::PointRef p = points_[s];
    for (size_t k = 0; k < p.n; ++k) out << " " << p.data[k].slot << ":" << num(p.data[k].x);
    out << "\n";
  }
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
