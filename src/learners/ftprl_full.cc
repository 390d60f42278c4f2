// ftprl-full: see ftprl_full.h for the algorithm, its paper and equations.
#include "learners/ftprl_full.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "learners/common/matrix_option.h"
#include "learners/common/state.h"
#include "learners/ftprl.h"
#include "learners/ftprl_sketch.h"
#include "lepus/errors.h"
#include "sketch/dense_io.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 2;  // 2: the data-derived radius (flag, c, X); 1 loads as a given radius
constexpr uint64_t kMaxCap = 4096;

// Q's eigenvalues (square roots of M's) at or below this fraction of the largest are 0, directions no gradient
// has touched: M's below 1e-14 of its largest. A symmetric eigensolver is accurate to ~1e-16 of the largest, so
// this keeps real directions of small gradients (1e-12 of the largest is common once predictions saturate) and
// drops M's rounding (a tolerance of 1e-12 on Q's would keep it as directions).
constexpr double kRankTolerance = 1e-7;

Eigen::VectorXd pinv_apply(const Eigen::MatrixXd& v, const Eigen::VectorXd& l, const Eigen::VectorXd& y) {
  const double top = l.size() ? l.maxCoeff() : 0.0;
  Eigen::VectorXd c = v.transpose() * y;
  for (Eigen::Index i = 0; i < l.size(); ++i) c(i) = l(i) > kRankTolerance * top ? c(i) / l(i) : 0.0;
  return v * c;
}

}  // namespace

void FtprlFullCore::resize(Eigen::Index n) {
  const Eigen::Index k = q.size();
  if (n <= k) return;
  Eigen::MatrixXd qc = Eigen::MatrixXd::Zero(n, n);
  qc.topLeftCorner(k, k) = q_cum;
  q_cum.swap(qc);
  q.conservativeResizeLike(Eigen::VectorXd::Zero(n));
  z.conservativeResizeLike(Eigen::VectorXd::Zero(n));
}

Eigen::VectorXd FtprlFullCore::advance(const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                                       const Eigen::MatrixXd& v, const Eigen::VectorXd& l) {
  Eigen::MatrixXd next = v * l.asDiagonal() * v.transpose();
  next.triangularView<Eigen::StrictlyLower>() =
      next.transpose();     // exactly symmetric (saved as one triangle)
  q += (next - q_cum) * w;  // q += Q_t w_t: the old point, the new increment
  z += g;
  q_cum.swap(next);
  return pinv_apply(v, l, q - z);
}

Eigen::VectorXd ftprl_ball_projection(const Eigen::MatrixXd& v, const Eigen::VectorXd& l,
                                      const Eigen::VectorXd& u, double r) {
  if (u.norm() <= r) return u;
  const Eigen::VectorXd c = v.transpose() * u;  // u in the eigenbasis
  auto norm_at = [&](double mu) {
    double s = 0.0;
    for (Eigen::Index i = 0; i < l.size(); ++i) {
      if (!(l(i) > 0.0)) continue;
      const double f = l(i) / (l(i) + mu) * c(i);
      s += f * f;
    }
    return std::sqrt(s);
  };
  // ||w(mu)|| falls from ||u|| > r at mu = 0 to 0: bracket, then bisect in log space and polish.
  double lo = 0.0, hi = std::max(1e-300, l.maxCoeff());
  while (norm_at(hi) > r) hi *= 2.0;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = lo == 0.0 ? hi / 2.0 : 0.5 * (lo + hi);
    (norm_at(mid) > r ? lo : hi) = mid;
  }
  const double mu = hi;  // ||w(mu)|| <= r: feasible
  Eigen::VectorXd cw(l.size());
  for (Eigen::Index i = 0; i < l.size(); ++i) cw(i) = l(i) > 0.0 ? l(i) / (l(i) + mu) * c(i) : 0.0;
  Eigen::VectorXd w = v * cw;
  const double n = w.norm();
  if (n > r) w *= r / n;  // rounding
  return w;
}

FtprlFullOptions FtprlFullOptions::from(const OptionValues& v) {
  FtprlFullOptions o;
  check_option_values(ftprl_full_row().options, v);
  o.data_radius = !v.has("ftprl_radius");
  o.radius = o.data_radius ? kDataRadiusFull : v.number("ftprl_radius");
  if (v.has("max_dense_features")) o.cap = common::max_dense_of(v);
  return o;
}

FtprlFullLearner::FtprlFullLearner(const FtprlFullOptions& options, const Loss& loss, int bits,
                                   bool test_only)
    : opt_(options),
      loss_(loss),
      bits_(bits),
      radius_(options.radius),
      clip_(loss.initial_range(), test_only),
      builder_(bits) {
  if (!(opt_.radius > 0.0) || opt_.cap < 1 || opt_.cap > kMaxCap)
    throw ConfigError("ftprl-full: the radius must be > 0 and the feature cap in [1, 4096]");
}

Prediction FtprlFullLearner::predict(const Example& x) const {
  const SparseVector& v = builder_.build(x);
  double s = x.initial;
  for (const Coord& c : v) {
    const uint32_t p = index_.find(c.slot);
    if (p != CompactIndex::kNone) s += w_(p) * c.x;
  }
  return clip_.of(common::to_float(s, safeguards_));
}

double ftprl_full_dloss(const Loss& loss, const Prediction& p, const Example& x,
                        const common::LabelClip& clip, uint64_t& safeguards) {
  const double d = loss.first_derivative(p.raw, x.label, clip.range()) * static_cast<double>(x.weight);
  if (std::isfinite(d)) return d;
  ++safeguards;
  return 0.0;
}

Prediction FtprlFullLearner::learn(const Example& x) {
  clip_.see(x);
  const Prediction p = predict(x);
  if (common::teaches(x)) update(x, ftprl_full_dloss(loss_, p, x, clip_, safeguards_));
  return p;
}

void FtprlFullLearner::update(const Example& x, double dloss) {
  if (dloss == 0.0) return;
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  if (v.size() == 0) return;
  size_t fresh = 0;
  for (const Coord& c : v) fresh += index_.find(c.slot) == CompactIndex::kNone;
  if (index_.size() + fresh > opt_.cap)
    throw ConfigError("ftprl-full: this example would bring the distinct features to " +
                      std::to_string(index_.size() + fresh) + ", past the cap of " +
                      std::to_string(opt_.cap) +
                      " (--max_dense_features; one eigendecomposition of n x n per example); use fewer bits "
                      "(-b), --matrix sketch or --learner ftprl-diag");
  for (const Coord& c : v)
    if (index_.find(c.slot) == CompactIndex::kNone) index_.insert(c.slot);
  const Eigen::Index n = static_cast<Eigen::Index>(index_.size());
  if (m_.rows() < n) {
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
    m.topLeftCorner(m_.rows(), m_.cols()) = m_;
    m_.swap(m);
    w_.conservativeResizeLike(Eigen::VectorXd::Zero(n));
    core_.resize(n);
  }
  Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
  double g2 = 0.0;
  for (const Coord& c : v) {
    g(index_.find(c.slot)) = dloss * c.x;
    g2 += (dloss * c.x) * (dloss * c.x);
  }
  // M's entries stay below 1e300 (beyond, its square root and eigenvectors lose meaning): such a gradient is
  // skipped and counted.
  if (!(g2 > 0.0) || !(g2 + m_.diagonal().cwiseAbs().maxCoeff() < 1e300)) [[unlikely]] {
    ++safeguards_;
    return;
  }
  for (const Coord& a : v)
    for (const Coord& b : v) m_(index_.find(a.slot), index_.find(b.slot)) += (dloss * a.x) * (dloss * b.x);
  if (opt_.data_radius) {  // R_t = c / X_t, X_t including this example
    x_max_ = std::max(x_max_, std::sqrt(v.norm2()));
    radius_ = opt_.radius / x_max_;
  }
  // Q_{1:t} = M^{1/2} / R in M's eigenbasis.
  const SymEigen eig(m_);
  Eigen::VectorXd l = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt() / radius_;
  const double top = l.size() ? l.maxCoeff() : 0.0;
  for (Eigen::Index i = 0; i < l.size(); ++i)
    if (!(l(i) > kRankTolerance * top)) l(i) = 0.0;
  const Eigen::VectorXd u = core_.advance(w_, g, eig.eigenvectors(), l);
  w_ = ftprl_ball_projection(eig.eigenvectors(), l, u, radius_);
}

double FtprlFullLearner::weight(uint64_t slot) const {
  const uint32_t p = index_.find(slot);
  return p == CompactIndex::kNone ? 0.0 : w_(p);
}

std::vector<std::string> FtprlFullLearner::describe() const {
  if (opt_.data_radius)
    return {"ftprl_radius = data: " + common::number(opt_.radius) + " / the largest ||x|| so far",
            "feasible set = ball ||w||_2 <= " + common::number(opt_.radius) + " / max ||x||",
            "matrix = full, up to " + std::to_string(opt_.cap) + " features"};
  return {"ftprl_radius = " + common::number(opt_.radius),
          "feasible set = ball ||w||_2 <= " + common::number(opt_.radius),
          "matrix = full, up to " + std::to_string(opt_.cap) + " features"};
}

// Version 2: the data-derived radius (its flag and X after R); 1 loads as a given radius. Then the feature cap,
// the label range, the features held and w, q, z, M and Q_{1:t} over them; readable: "slot:w_i" in slot order.
template <class Self, class V>
void FtprlFullLearner::state(Self& self, V& v) {
  const uint32_t version = v.versions(1, kStateVersion);
  v.fixed("bits", static_cast<uint32_t>(self.bits_));
  const double radius = v.number("ftprl_radius", self.opt_.radius, common::kPositive);
  bool data = false;
  double x_max = 0.0;
  if (version >= 2) {
    data = v.flag("data_radius", self.opt_.data_radius);
    x_max = v.number("X", self.x_max_, common::kNonNegative);
  } else {
    v.absent(self.opt_.data_radius, false);
    v.absent(self.x_max_, 0.0);
  }
  const uint64_t cap = v.whole("cap", self.opt_.cap, 1, kMaxCap);
  v.clip(self.clip_);
  const uint64_t n = v.index("features", self.index_, cap);
  const Eigen::VectorXd& w = v.vector("w", self.w_, n, n);
  v.vector("q", self.core_.q, n, n);
  v.vector("z", self.core_.z, n, n);
  v.upper("second_moment", self.m_, n, n);
  v.upper("regularizer", self.core_.q_cum, n, n);
  v.check(w.norm() <= (data && x_max > 0.0 ? radius / x_max : radius) * (1 + 1e-9),
          "the weights lie outside the ball");
  v.lines([&self](std::ostream& out) {
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (uint32_t p = 0; p < self.index_.size(); ++p) order.push_back({self.index_.slot(p), p});
    std::sort(order.begin(), order.end());
    for (const auto& [slot, p] : order) out << slot << ":" << self.w_(p) << "\n";
  });
}

void FtprlFullLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void FtprlFullLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void FtprlFullLearner::load(ModelReader& in) {
  common::load_state(*this, in);
  radius_ = opt_.data_radius && x_max_ > 0.0 ? opt_.radius / x_max_ : opt_.radius;
}

LearnerRow ftprl_full_row() {
  LearnerRow row{
      "ftprl-full",
      "no learning rate, a full-matrix step (the square root of the gradients' second moment), weights "
      "in the ball of radius --ftprl_radius: for a few hundred correlated features, or any number with "
      "--matrix sketch (McMahan & Streeter 2010, FTPRL with a full-matrix schedule)",
      {ftprl_radius_spec(), common::matrix_option({"full", "sketch"}), common::rank_option(),
       common::max_dense_option(256)},
      [](const LearnerContext& c) -> std::unique_ptr<Learner> {
        const FtprlFullOptions o = FtprlFullOptions::from(c.options);
        if (common::matrix_kind_of(c.options, MatrixKind::kFull) == MatrixKind::kSketch)
          return std::make_unique<FtprlSketchLearner>(o, common::rank_of(c.options), c.loss, c.bits,
                                                      c.test_only);
        return std::make_unique<FtprlFullLearner>(o, c.loss, c.bits, c.test_only);
      }};
  row.traits.matrix_modes = {"full", "sketch"};
  row.traits.matrix_nearest = {
      {"diag", "--learner ftprl-diag (FTPRL-Diag, a box) or ftprl-const (the ball)"}};
  row.traits.merge =
      "the ranks' mean point w and mean second moment (their Frequent Directions sketches "
      "concatenated and shrunk); an approximation of one learner over all the data, exact with one rank";
  row.traits.merge_matrix = "sketch";
  return row;
}

}  // namespace lepus
