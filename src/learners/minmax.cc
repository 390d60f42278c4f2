// The min-max regressors: see minmax.h for the algorithms, the thesis and its equations.
#include "learners/minmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "learners/common/matrix_option.h"
#include "learners/common/plumbing.h"
#include "learners/common/state.h"
#include "lepus/errors.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 2;  // 2: the data-relative defaults (1 still loads)
constexpr double kInf = std::numeric_limits<double>::infinity();
using W = MinmaxRule::Weight;
using R = MinmaxRule::Reset;

}  // namespace

// name, shrink, drift, γ, reset, options used (b, c, r forgetting, AROW's r), a sketch mode. Only wemm
// (Σ = I/b − ZZᵀ) and LASER's state (its precision in eigen-form) have the low-rank form of minmax_sketch.h;
// laser-noshrink is LASER's state with another prediction, so it has it too.
const std::vector<MinmaxRule>& minmax_rules() {
  static const std::vector<MinmaxRule> rules = {
      {"wemm", false, false, W::kWemm, R::kNone, true, false, false, false, true},
      {"laser", true, true, W::kOne, R::kNone, true, true, false, false, true},
      {"laser-noshrink", false, true, W::kOne, R::kNone, true, true, false, false, true},
      {"rls", false, false, W::kForget, R::kNone, true, false, true, false, false},
      {"aaw", true, false, W::kOne, R::kNone, true, false, false, false, false},
      {"arowr", false, false, W::kArow, R::kNone, true, false, false, true, false},
      {"arcor", false, false, W::kArow, R::kLambdaMin, false, false, false, true, false},
      {"cr-rls", false, false, W::kForget, R::kPeriodic, false, false, true, false, false},
  };
  return rules;
}

const MinmaxRule& minmax_rule(std::string_view name) {
  for (const auto& r : minmax_rules())
    if (name == r.name) return r;
  throw std::out_of_range("no min-max rule " + std::string(name));
}

MinmaxOptions MinmaxOptions::from(const MinmaxRule& rule, const OptionValues& v) {
  for (const auto& row : minmax_rows())
    if (row.name == rule.name) check_option_values(row.options, v);  // ranges declared once in the row
  MinmaxOptions o;
  o.rule = &rule;
  // Defaults (measured, docs/algorithms/minmax.md): wemm b = 2X² (the thesis's b > ‖x‖², with m <= 1/2);
  // laser c = 100X², laser-noshrink c = 3X², their b = 0.1X², with X² the largest ‖x‖² of the first examples. A
  // c given alone keeps b = 0.01c, a b given alone c = 100b.
  const bool has_b = v.has("mm_b"), has_c = v.has("mm_c");
  if (has_c) o.c = v.number("mm_c");
  if (has_b) o.b = v.number("mm_b");
  if (rule.drift) {
    if (has_c && !has_b) o.b = 0.01 * o.c;
    if (has_b && !has_c) o.c = 100.0 * o.b;
    if (!has_b && !has_c) o.b_scale = 0.1, o.c_scale = rule.shrink ? 100.0 : 3.0;
  } else if (rule.weight == W::kWemm && !has_b) {
    o.b_scale = 2.0;
  }
  if (o.pending()) o.resolve(1.0);  // placeholders until the data's scale is known
  if (v.has("rls_r")) o.forget = v.number("rls_r");
  if (v.has("arow_r")) o.arow_r = v.number("arow_r");
  if (v.has("crrls_T0")) o.t0 = v.number("crrls_T0");
  if (v.has("arcor_Lambda")) o.lambda = v.number("arcor_Lambda");
  if (v.has("arcor_RB")) o.radius = v.number("arcor_RB");
  o.matrix = common::matrix_kind_of(v, MatrixKind::kFull);
  o.max_dense = common::max_dense_of(v);
  if (rule.sketch) o.rank = common::rank_of(v);
  if (!(o.b > 0.0) || !std::isfinite(o.b)) throw ConfigError("--mm_b must be > 0");
  if (rule.drift && !(o.b < o.c))
    throw ConfigError("--learner " + std::string(rule.name) + " needs --mm_b < --mm_c (b = " +
                      common::number(o.b) + ", c = " + common::number(o.c) + ")");
  if (!(o.forget > 0.0 && o.forget <= 1.0)) throw ConfigError("--rls_r must be in (0, 1]");
  if (!(o.arow_r > 0.0) || !std::isfinite(o.arow_r)) throw ConfigError("--arow_r must be > 0");
  if (!(o.t0 >= 1.0) || o.t0 != std::floor(o.t0)) throw ConfigError("--crrls_T0 must be a whole number >= 1");
  if (!(o.lambda > 0.0 && o.lambda < 1.0)) throw ConfigError("--arcor_Lambda must be in (0, 1)");
  if (!(o.radius > 0.0)) throw ConfigError("--arcor_RB must be > 0");
  const bool mode_ok = o.matrix == MatrixKind::kFull || o.matrix == MatrixKind::kDiag ||
                       (o.matrix == MatrixKind::kSketch && rule.sketch);
  if (!mode_ok)
    throw ConfigError("--learner " + std::string(rule.name) + " has no --matrix " +
                      std::string(matrix_kind_name(o.matrix)) + " (its modes: full, diag" +
                      (rule.sketch ? ", sketch" : "") + ")");
  if (o.matrix == MatrixKind::kSketch && (o.rank < 1 || o.rank > MinmaxSketch::kMaxRank))
    throw ConfigError("--rank must be in [1, " + std::to_string(MinmaxSketch::kMaxRank) + "]");
  if (o.matrix == MatrixKind::kDiag && std::isfinite(o.radius))
    throw ConfigError("--arcor_RB (the projection, which touches every slot) needs --matrix full");
  return o;
}

void MinmaxOptions::resolve(double x2) {
  if (b_scale > 0.0) b = b_scale * x2;
  if (c_scale > 0.0) c = c_scale * x2;
}

double MinmaxOptions::sigma0() const {
  if (rule->reset != MinmaxRule::Reset::kNone) return 1.0;  // arcor, cr-rls: Σ_0 = I (Table 5.1)
  if (rule->drift) return (c - b) / (b * c);                // LASER: P_1 = Σ_0 + I/c = I/b
  return 1.0 / b;
}

MinmaxLearner::MinmaxLearner(const MinmaxOptions& options, int bits)
    : opt_(options), bits_(bits), prior_(options.sigma0()), builder_(bits) {
  if (opt_.matrix == MatrixKind::kDiag) slots_ = ZeroedTable<Slot>(size_t{1} << bits);
  if (opt_.matrix == MatrixKind::kSketch)
    sketch_.emplace(opt_.rule->drift ? MinmaxSketch::Form::kLaser : MinmaxSketch::Form::kWemm, opt_.b, opt_.c,
                    opt_.rank);
}

uint64_t MinmaxLearner::warmup_wanted() const { return opt_.pending() && t_ == 0 ? kScaleExamples : 0; }

void MinmaxLearner::warmup(std::span<const Example> prefix) {
  double x2 = 0.0;
  for (const Example& x : prefix) x2 = std::max(x2, builder_.build(x).norm2());
  resolve_scale(x2);
}

// X² = 0 or not finite (empty or hostile examples): 1.
void MinmaxLearner::resolve_scale(double x2) {
  if (!opt_.pending()) return;
  if (!(x2 > 0.0) || !std::isfinite(x2) || x2 > 1e150) x2 = 1.0;
  opt_.resolve(x2);
  opt_.b_scale = opt_.c_scale = 0.0;
  opt_.scale = x2;
  prior_ = opt_.sigma0();
  if (sketch_) sketch_.emplace(sketch_->form(), opt_.b, opt_.c, opt_.rank);
}

double MinmaxLearner::advanced(double base, double rounds) const {
  const double f = opt_.factor();
  const double v = f == 1.0 ? base + rounds * opt_.delta() : base * std::exp(-rounds * std::log(f));
  return std::min(v, kMaxSigma);
}

double MinmaxLearner::diag_value(const Slot& s) const {
  double base = s.s, round = s.tau;
  if (s.s == 0.0) base = opt_.sigma0(), round = 0.0;  // never written
  if (last_reset_ > 0.0 && last_reset_ >= round) base = 1.0, round = last_reset_;
  return advanced(base, static_cast<double>(t_) - round);
}

double MinmaxLearner::gamma(double m) const {
  switch (opt_.rule->weight) {
    case W::kWemm: return 1.0 / (1.0 - m);
    case W::kArow: return 1.0 / opt_.arow_r;
    case W::kForget: return 1.0 / opt_.forget;
    case W::kOne: break;
  }
  return 1.0;
}

MinmaxLearner::Round MinmaxLearner::evaluate(const SparseVector& v) const {
  Round r;
  const double delta = opt_.delta();
  if (sketch_) {
    const MinmaxSketch::Round s = sketch_->prepare(v);
    r.m = s.m;
    r.p = s.p;
  } else if (opt_.matrix == MatrixKind::kDiag) {
    pv_.clear();
    for (const Coord& c : v) {
      const Slot& s = slots_[c.slot];
      const double pi = diag_value(s) + delta;
      pv_.push_back(pi);
      r.m += pi * c.x * c.x;
      r.p += s.w * c.x;
    }
  } else {
    // xᵀ(Σ + δI)x over the nnz block; a slot not held has Σ_ii = prior_, no cross terms and w = 0.
    std::vector<std::pair<uint32_t, double>>& held = held_;
    held.clear();
    pos_.clear();
    for (const Coord& c : v) {
      const uint32_t i = index_.find(c.slot);
      pos_.push_back(i);
      if (i == CompactIndex::kNone) {
        r.m += (prior_ + delta) * c.x * c.x;
      } else {
        held.emplace_back(i, c.x);
        r.m += delta * c.x * c.x;
        r.p += w_(i) * c.x;
      }
    }
    for (const auto& [i, xi] : held) {
      double row = 0.0;
      for (const auto& [j, xj] : held) row += s_(i, j) * xj;
      r.m += xi * row;
    }
  }
  r.yhat = opt_.rule->shrink ? r.p / (1.0 + r.m) : r.p;
  return r;
}

MinmaxLearner::Round MinmaxLearner::evaluate(const Example& x) const {
  Round r = evaluate(builder_.build(x));
  r.p += x.initial;
  r.yhat += x.initial;
  return r;
}

Prediction MinmaxLearner::output(double yhat) const {
  const float f = common::to_float(yhat, safeguards_);
  return Prediction{f, f};
}

Prediction MinmaxLearner::predict(const Example& x) const { return output(evaluate(x).yhat); }

Prediction MinmaxLearner::learn(const Example& x) {
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  if (!common::teaches(x) || v.size() == 0) return output(evaluate(v).yhat + x.initial);
  // No warm-up (a caller that is not the driver): the scale is this example's.
  if (opt_.pending()) resolve_scale(v.norm2());
  return output(learn_vector(v, static_cast<double>(x.label) - x.initial, x.weight) + x.initial);
}

double MinmaxLearner::learn_vector(const SparseVector& v, double y, double weight) {
  const Round round = evaluate(v);
  // An importance weight k: the example (√k x, √k y), exact for the weighted squared loss (one round for LASER).
  if (v.size() == 0 || !(weight > 0.0)) return round.yhat;
  if (sketch_)
    learn_sketch(v, y, weight, round);  // the round's m and p, computed once (evaluate left x's Zᵀx / Qᵀx)
  else if (opt_.matrix == MatrixKind::kDiag)
    learn_diag(v, y, weight, round);
  else
    learn_full(v, y, weight, round);
  return round.yhat;
}

void MinmaxLearner::grow(size_t n) {
  if (static_cast<size_t>(s_.rows()) >= n) return;
  size_t cap = std::max<size_t>(16, static_cast<size_t>(s_.rows()));
  while (cap < n) cap *= 2;
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(cap, cap);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(cap);
  const Eigen::Index held = static_cast<Eigen::Index>(index_.size());
  const Eigen::Index old = std::min<Eigen::Index>(held, s_.rows());
  s.topLeftCorner(old, old) = s_.topLeftCorner(old, old);
  w.head(old) = w_.head(old);
  s_.swap(s);
  w_.swap(w);
}

// WEMM needs m < 1 (thesis, Theorem 2; Σ stays positive definite iff m < 1): when m >= 1 − ε the round updates on
// (s x, s y) with s² = (1 − ε)/m instead, the same linear relation at a lower importance weight (counted).
// Returns s, 1 when no guard applies.
double MinmaxLearner::wemm_guard(double m) const {
  if (opt_.rule->weight != W::kWemm || m < 1.0 - kWemmEps) return 1.0;
  ++safeguards_;
  return std::sqrt((1.0 - kWemmEps) / m);
}

MinmaxLearner::Taught MinmaxLearner::taught(double y, double weight, Round round) const {
  const double sk = std::sqrt(weight);
  Taught t{sk, round.m * weight, round.p * sk, sk * y, true};
  if (const double sc = wemm_guard(t.m); sc != 1.0) {
    t.s *= sc;
    t.m *= sc * sc;
    t.p *= sc;
    t.ys *= sc;
  }
  t.ok = healthy(t.m, t.p, t.ys);
  return t;
}

// A round whose numbers are not finite (or m < 0) is skipped, counted.
bool MinmaxLearner::healthy(double m, double p, double ys) const {
  if (std::isfinite(m) && std::isfinite(p) && std::isfinite(ys) && m >= 0.0) return true;
  ++safeguards_;
  return false;
}

void MinmaxLearner::learn_full(const SparseVector& v, double y, double weight, Round round) {
  size_t fresh = 0;
  for (uint32_t i : pos_) fresh += i == CompactIndex::kNone ? 1 : 0;
  if (index_.size() + fresh > opt_.max_dense)
    throw ConfigError("--learner " + std::string(opt_.rule->name) + " --matrix full holds at most " +
                      std::to_string(opt_.max_dense) +
                      " features (--max_dense_features, at most 4096); use --matrix diag or fewer bits (-b)");
  const size_t before = index_.size();
  grow(before + fresh);
  const Taught t = taught(y, weight, round);
  if (!t.ok) return;
  xv_.clear();
  size_t j = 0;
  for (const Coord& c : v) {
    uint32_t& i = pos_[j++];
    if (i == CompactIndex::kNone) {  // a new position enters with the prior of a slot never updated
      i = index_.insert(c.slot);
      s_.row(i).head(before + fresh).setZero();
      s_.col(i).head(before + fresh).setZero();
      s_(i, i) = prior_;
      w_(i) = 0.0;
    }
    xv_.push_back(t.s * c.x);
  }
  const Eigen::Index n = static_cast<Eigen::Index>(index_.size());
  const double delta = opt_.delta();
  h_.setZero(n);
  for (size_t j = 0; j < pos_.size(); ++j) h_.noalias() += s_.col(pos_[j]).head(n) * xv_[j];
  for (size_t j = 0; j < pos_.size(); ++j) h_(pos_[j]) += delta * xv_[j];
  const double m = t.m, p = t.p, ys = t.ys;  // xᵀ(Σ + δI)x and wᵀx as evaluate(v) computed them, scaled
  const double g = gamma(m);
  const double kk = g / (1.0 + g * m);
  const double r = ys - p;
  const double coef = kk * r;
  if (!h_.allFinite() || !std::isfinite(coef * h_.cwiseAbs().maxCoeff())) {
    ++safeguards_;
    return;
  }
  w_.head(n) += coef * h_;
  auto s = s_.topLeftCorner(n, n);
  if (delta != 0.0) s.diagonal().array() += delta;
  h_ *= std::sqrt(kk);  // Σ -= k h hᵀ as u uᵀ: exactly symmetric in floating point
  s.noalias() -= h_ * h_.transpose();
  const double f = opt_.factor();
  if (f != 1.0) {
    s /= f;
    for (Eigen::Index i = 0; i < n; ++i) {  // RLS wind-up: a congruence D Σ D keeps Σ positive definite
      if (s(i, i) <= kMaxSigma) continue;
      ++safeguards_;
      const double d = std::sqrt(kMaxSigma / s(i, i));
      s.row(i) *= d;
      s.col(i) *= d;
    }
  }
  prior_ = advanced(prior_, 1.0);
  ++t_;
  bool reset = false;
  if (opt_.rule->reset == R::kPeriodic) {
    reset = t_ % static_cast<uint64_t>(opt_.t0) == 0;
  } else if (opt_.rule->reset == R::kLambdaMin) {
    const SymEigen eig(s, false);
    reset = std::min(eig.eigenvalues().minCoeff(), prior_) < opt_.lambda;
  }
  if (reset) {
    s.setIdentity();
    prior_ = 1.0;
  }
  if (std::isfinite(opt_.radius) && w_.head(n).norm() > opt_.radius) project_full();
}

// ARCOR's projection (Vaits & Crammer, ALT 2011): w = argmin (w - w̃)ᵀΣ⁻¹(w - w̃) s.t. ‖w‖ <= R_B, i.e.
// w = (I + ζΣ)⁻¹ w̃ with ζ > 0 the root of f(ζ) = Σ_j (q_jᵀw̃)²/(1 + ζλ_j)² - R_B² (Σ = QΛQᵀ): f is convex and
// decreasing, so Newton from ζ = 0 converges monotonically. Slots not held have w = 0 and play no part.
void MinmaxLearner::project_full() {
  const Eigen::Index n = static_cast<Eigen::Index>(index_.size());
  const SymEigen eig(s_.topLeftCorner(n, n));
  const Eigen::VectorXd lam = eig.eigenvalues().cwiseMax(0.0);
  const Eigen::VectorXd z = eig.eigenvectors().transpose() * w_.head(n);
  const double r2 = opt_.radius * opt_.radius;
  double zeta = 0.0;
  for (int it = 0; it < 100; ++it) {
    double f = -r2, fp = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double d = 1.0 + zeta * lam(j);
      f += z(j) * z(j) / (d * d);
      fp -= 2.0 * z(j) * z(j) * lam(j) / (d * d * d);
    }
    if (!(fp < 0.0)) break;
    const double next = zeta - f / fp;
    if (!(next > zeta) || next - zeta <= 1e-15 * std::max(1.0, zeta)) {
      zeta = std::max(zeta, next);
      break;
    }
    zeta = next;
  }
  Eigen::VectorXd scaled = z;
  for (Eigen::Index j = 0; j < n; ++j) scaled(j) /= 1.0 + zeta * lam(j);
  w_.head(n) = eig.eigenvectors() * scaled;
}

void MinmaxLearner::learn_sketch(const SparseVector& v, double y, double weight, Round round) {
  const Taught t = taught(y, weight, round);
  if (!t.ok) return;
  const double g = gamma(t.m), kk = g / (1.0 + g * t.m);
  if (!sketch_->update(v, t.s, kk * (t.ys - t.p), kk)) {
    ++safeguards_;
    return;
  }
  ++t_;
}

void MinmaxLearner::learn_diag(const SparseVector& v, double y, double weight, Round round) {
  const std::vector<double>& pv = pv_;  // P_ii, left by evaluate(v)
  const Taught t = taught(y, weight, round);
  if (!t.ok) return;
  const double xs = t.s, ys = t.ys, m = t.m, p = t.p;
  const double g = gamma(m), kk = g / (1.0 + g * m), r = ys - p, f = opt_.factor();
  const double stamp = static_cast<double>(t_ + 1);
  size_t j = 0;
  for (const Coord& c : v) {
    Slot& s = slots_[c.slot];
    const double pi = pv[j++], xi = xs * c.x;
    const double w = s.w + kk * r * pi * xi;
    double si = 1.0 / (1.0 / pi + g * xi * xi) / f;  // the diagonal of the precision rule
    if (!std::isfinite(w) || !(si > 0.0)) {
      ++safeguards_;
      continue;
    }
    if (si > kMaxSigma) si = kMaxSigma, ++safeguards_;
    s.w = w;
    s.s = si;
    s.tau = stamp;
    min_s_ = std::min(min_s_, si);
  }
  ++t_;
  bool reset = false;
  if (opt_.rule->reset == R::kPeriodic) {
    reset = t_ % static_cast<uint64_t>(opt_.t0) == 0;
  } else if (opt_.rule->reset == R::kLambdaMin) {
    reset = min_s_ < opt_.lambda;  // between resets the s_i only shrink: λ_min is the running minimum
  }
  if (reset) {
    last_reset_ = static_cast<double>(t_);
    min_s_ = 1.0;
  }
}

double MinmaxLearner::weight(uint64_t slot) const {
  if (sketch_) return sketch_->weight(slot);
  if (opt_.matrix == MatrixKind::kDiag) return slots_[slot].w;
  const uint32_t i = index_.find(slot);
  return i == CompactIndex::kNone ? 0.0 : w_(i);
}

double MinmaxLearner::sigma(uint64_t a, uint64_t b) const {
  if (sketch_) return sketch_->sigma(a, b);
  if (opt_.matrix == MatrixKind::kDiag) return a == b ? diag_value(slots_[a]) : 0.0;
  const uint32_t i = index_.find(a), j = index_.find(b);
  if (i == CompactIndex::kNone || j == CompactIndex::kNone) return a == b ? prior_ : 0.0;
  return s_(i, j);
}

std::vector<std::string> MinmaxLearner::describe() const {
  std::vector<std::string> out;
  const MinmaxRule& r = *opt_.rule;
  const std::string n = r.name;
  const std::string first =
      " x the largest ||x||^2 of the first " + std::to_string(kScaleExamples) + " examples";
  if (r.uses_b)
    out.push_back(
        n + " b = " + (opt_.b_scale > 0.0 ? common::number(opt_.b_scale) + first : common::number(opt_.b)));
  if (r.uses_c)
    out.push_back(
        n + " c = " + (opt_.c_scale > 0.0 ? common::number(opt_.c_scale) + first : common::number(opt_.c)));
  if (r.uses_forget) out.push_back(n + " r = " + common::number(opt_.forget));
  if (r.uses_arow_r) out.push_back(n + " r = " + common::number(opt_.arow_r));
  if (r.reset == R::kPeriodic) out.push_back(n + " T0 = " + common::number(opt_.t0));
  if (r.reset == R::kLambdaMin) {
    out.push_back(n + " Lambda = " + common::number(opt_.lambda));
    out.push_back(
        n + " R_B = " + (std::isfinite(opt_.radius) ? common::number(opt_.radius) : std::string("none")));
  }
  if (opt_.matrix == MatrixKind::kSketch)
    out.push_back("matrix = sketch, rank " + std::to_string(opt_.rank));
  else
    out.push_back(opt_.matrix == MatrixKind::kDiag
                      ? std::string("matrix = diag")
                      : "matrix = full, up to " + std::to_string(opt_.max_dense) + " features");
  return out;
}

std::vector<std::string> MinmaxLearner::summary_lines() const {
  if (!(opt_.scale > 0.0)) return {};
  const MinmaxRule& r = *opt_.rule;
  std::string line = std::string(r.name) + " data scale X^2 = " + common::number(opt_.scale) +
                     ": b = " + common::number(opt_.b);
  if (r.uses_c) line += ", c = " + common::number(opt_.c);
  return {line};
}

// Version 2 (1 lacks the data-relative defaults' scales): the rule, --matrix and -b of this run, the options
// in force, the rounds, σ_t, the diag mode's reset round and smallest Σ_ii, then the mode's matrix: the sketch,
// the diagonal slots (w, Σ_ii's base, the round it was written), or the slots held with a row per slot of w_i
// and Σ_ij, j >= i. Readable: "slot:w_i Σ_ii" by slot.
template <class Self, class V>
void MinmaxLearner::state(Self& self, V& v) {
  auto& o = self.opt_;
  const uint32_t version = v.versions(1, kStateVersion);
  v.fixed("learner", std::string(o.rule->name), "the model is another learner's");
  v.fixed("matrix", static_cast<uint8_t>(o.matrix), "saved with another --matrix than this run's");
  v.lines([&o](std::ostream& out) { out << "matrix " << matrix_kind_name(o.matrix) << "\n"; });
  v.fixed("bits", static_cast<uint32_t>(self.bits_), "saved with another -b");
  const double b = v.number("b", o.b, common::kPositive), c = v.number("c", o.c, common::kPositive);
  v.check(!o.rule->drift || b < c, "b is not below c");
  v.number("r", o.forget, {{0.0, 1.0, true, false}});
  v.number("arow_r", o.arow_r, common::kPositive);
  v.number("T0", o.t0, {{1.0}});
  v.number("Lambda", o.lambda, {{0.0, 1.0, true, true}});
  v.unbounded("R_B", o.radius, common::kPositive);
  if (version >= 2) {
    v.number("b_scale", o.b_scale, common::kNonNegative);
    v.number("c_scale", o.c_scale, common::kNonNegative);
    v.number("data_scale", o.scale, common::kNonNegative);
  } else {
    v.absent(o.b_scale, 0.0);
    v.absent(o.c_scale, 0.0);
    v.absent(o.scale, 0.0);
  }
  const double t = static_cast<double>(v.whole("rounds", self.t_));
  v.number("prior", self.prior_, common::kPositive);
  v.number("last_reset", self.last_reset_, {{0.0, t}});
  v.number("smallest_sigma", self.min_s_, {{0.0, 1.0, true, false}});
  if (self.sketch_)
    v.nested(*self.sketch_, b, c, self.bits_);
  else if (o.matrix == MatrixKind::kDiag)
    diag_state(self, v, t);
  else
    full_state(self, v);
}

template <class Self, class V>
void MinmaxLearner::diag_state(Self& self, V& v, double t) {
  v.slots(
      self.slots_, [t](const Slot& s) { return s.s >= 0.0 && s.tau >= 0.0 && s.tau <= t; },
      [&self](std::ostream& out, size_t, const Slot& s) { out << s.w << " " << self.diag_value(s); });
}

template <class Self, class V>
void MinmaxLearner::full_state(Self& self, V& v) {
  const uint64_t n = v.index("held features", self.index_, self.opt_.max_dense, self.bits_);
  const uint64_t cap = std::max<uint64_t>(16, n);
  v.rows("sigma", self.w_, self.s_, n, n, true, cap, cap);
  v.lines([&self](std::ostream& out) {
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (uint32_t i = 0; i < self.index_.size(); ++i) order.emplace_back(self.index_.slot(i), i);
    std::sort(order.begin(), order.end());
    for (const auto& [slot, i] : order) out << slot << ":" << self.w_(i) << " " << self.s_(i, i) << "\n";
  });
}

void MinmaxLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void MinmaxLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void MinmaxLearner::load(ModelReader& in) { common::load_state(*this, in); }

std::vector<LearnerRow> minmax_rows() {
  using Kind = OptionSpec::Kind;
  const OptionSpec::Range positive{0.0, kInf, true, false};
  auto b_opt = [&](const char* def) {
    return OptionSpec{
        "mm_b",
        "",
        Kind::kNumber,
        def,
        "b, the prior's weight on ||u||^2 (default: wemm 2 X^2, laser and laser-noshrink 0.1 X^2, or "
        "0.01 c when --mm_c is given, with X^2 the largest squared norm of the first 256 examples, "
        "saved in the model; 1 for the others): Sigma_0 = I/b (laser: (c-b)/(bc) I); larger b learns "
        "more cautiously (wemm needs b > ||x||^2, otherwise examples are down-weighted)",
        positive,
        {}};
  };
  const OptionSpec c_opt{
      "mm_c",
      "",
      Kind::kNumber,
      "",
      "c, the penalty on drift of the best model: smaller tracks faster (default: 100 X^2 for "
      "laser, 3 X^2 for laser-noshrink, with X^2 the largest squared norm of the first 256 "
      "examples, saved in the model; 100 b when only --mm_b is given)",
      positive,
      {}};
  const OptionSpec forget_opt{
      "rls_r", "", Kind::kNumber, "1", "forgetting factor r (1: no forgetting)", {0.0, 1.0, true, false}, {}};
  const OptionSpec arow_opt{
      "arow_r",
      "",
      Kind::kNumber,
      "1",
      "AROW's r, the assumed noise variance: larger learns more slowly (only r x b matters)",
      positive,
      {}};
  auto modes = [](const MinmaxRule& rule) {
    if (!rule.sketch)
      return std::vector<OptionSpec>{common::matrix_option({"full", "diag"}), common::max_dense_option(1000)};
    return std::vector<OptionSpec>{common::matrix_option({"full", "diag", "sketch"}), common::rank_option(),
                                   common::max_dense_option(1000)};
  };
  struct Text {
    const char* name;
    const char* help;
  };
  const Text texts[] = {
      {"wemm",
       "weighted min-max regression for stationary data, second order, needs no label bound (Moroshko "
       "and Crammer, WEMM; squared loss only)"},
      {"laser",
       "last-step min-max regression that tracks a drifting target (Moroshko and Crammer, LASER); its "
       "prediction is shrunk toward 0 (squared loss only)"},
      {"laser-noshrink",
       "LASER's tracking update with the unshrunk (Kalman filter) prediction: usually the better "
       "drift tracker (squared loss only)"},
      {"rls",
       "recursive least squares with forgetting factor --rls_r; 1 is online ridge regression (squared loss "
       "only)"},
      {"aaw",
       "Vovk-Azoury-Warmuth (Forster) online ridge regression, prediction shrunk on novel inputs (squared "
       "loss only)"},
      {"arowr", "AROW for regression: second-order confidence-weighted regression (squared loss only)"},
      {"arcor",
       "AROW for regression with covariance reset when confidence gets too high, for drifting data "
       "(squared loss only)"},
      {"cr-rls",
       "recursive least squares that resets its covariance every --crrls_T0 examples, for drifting "
       "data (squared loss only)"},
  };
  std::vector<LearnerRow> rows;
  for (const Text& t : texts) {
    const MinmaxRule& rule = minmax_rule(t.name);
    std::vector<OptionSpec> options;
    if (rule.drift) {
      options.push_back(c_opt);
      options.push_back(b_opt(""));
    } else if (rule.uses_b) {
      options.push_back(b_opt(rule.weight == W::kWemm ? "" : "1"));
    }
    if (rule.uses_forget) options.push_back(forget_opt);
    if (rule.uses_arow_r) options.push_back(arow_opt);
    if (rule.reset == R::kPeriodic)
      options.push_back({"crrls_T0",
                         "",
                         Kind::kNumber,
                         "50",
                         "rounds between covariance resets",
                         {1.0, 1e15, false, false},
                         {}});
    if (rule.reset == R::kLambdaMin) {
      options.push_back({"arcor_Lambda",
                         "",
                         Kind::kNumber,
                         "0.001",
                         "reset the covariance when its smallest eigenvalue falls below this",
                         {0.0, 1.0, true, true},
                         {}});
      options.push_back(
          {"arcor_RB",
           "",
           Kind::kNumber,
           "",
           "project the weights onto the ball ||w|| <= R_B (default: no projection; --matrix full)",
           positive,
           {}});
    }
    for (auto& o : modes(rule)) options.push_back(o);
    LearnerRow row{t.name, t.help, options,
                   [&rule](const LearnerContext& c) {
                     return std::make_unique<MinmaxLearner>(MinmaxOptions::from(rule, c.options), c.bits);
                   },
                   LearnerTraits{}};
    row.traits.losses = {"squared"};
    if (rule.sketch) {
      row.traits.matrix_modes = {"full", "diag", "sketch"};
      row.traits.matrix_nearest = {
          {"auto", "--matrix full, or --matrix sketch beyond a few thousand features"}};
    } else {
      row.traits.matrix_modes = {"full", "diag"};
      row.traits.matrix_nearest = {{"sketch",
                                    "--matrix diag (a sketch exists only for wemm, laser and "
                                    "laser-noshrink)"},
                                   {"auto", "--matrix full"}};
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lepus
