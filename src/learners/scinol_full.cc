// scinol-full: see scinol_full.h for the algorithm, its paper and equations.
#include "learners/scinol_full.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <ostream>

#include "learners/common/matrix_option.h"
#include "learners/common/state.h"
#include "learners/scinol.h"
#include "learners/scinol_sketch.h"
#include "lepus/errors.h"
#include "sketch/dense_io.h"

namespace lepus {
namespace {

// Version 2 adds the variant, eps and the wealth; a version 1 state is the published algorithm's.
constexpr uint32_t kStateVersion = 2;
constexpr double kAlphaMin = 9.0 / 8.0;
constexpr uint64_t kMaxCap = 4096;
constexpr size_t kMinCapacity = 16;

}  // namespace

ScinolFullOptions ScinolFullOptions::from(const OptionValues& v) {
  ScinolFullOptions o;
  check_option_values(scinol_full_row().options, v);
  if (v.has("scinol_full_variant"))
    o.variant = v.text("scinol_full_variant") == "published" ? ScinolFullVariant::kPublished
                                                             : ScinolFullVariant::kScinol2;
  if (v.has("scinol_full_eps")) o.eps = v.number("scinol_full_eps");
  if (v.has("scinol_alpha")) o.alpha = v.number("scinol_alpha");
  if (v.has("scinol_L")) o.lipschitz = v.number("scinol_L");
  if (v.has("max_dense_features")) o.cap = common::max_dense_of(v);
  return o;
}

ScinolFullLearner::ScinolFullLearner(const ScinolFullOptions& options, const Loss& loss, int bits,
                                     bool test_only)
    : opt_(options), loss_(loss), bits_(bits), clip_(loss.initial_range(), test_only), builder_(bits) {
  if (!(opt_.alpha > kAlphaMin) || !(opt_.lipschitz > 0.0) || opt_.cap < 1 || opt_.cap > kMaxCap ||
      !(opt_.eps > 0.0) || !std::isfinite(opt_.eps))
    throw ConfigError("scinol-full: alpha must be > 9/8, L > 0, eps > 0 and the feature cap in [1, 4096]");
  if (!published()) wealth_ = opt_.eps;
}

void ScinolFullLearner::reserve(size_t n) {
  const size_t capacity = static_cast<size_t>(pinv_.rows());
  if (n <= capacity) return;
  size_t c = std::max(kMinCapacity, capacity);
  while (c < n) c *= 2;
  const Eigen::Index k = static_cast<Eigen::Index>(size()), cc = static_cast<Eigen::Index>(c);
  Eigen::MatrixXd p = Eigen::MatrixXd::Zero(cc, cc), q = Eigen::MatrixXd::Zero(cc, cc);
  p.topLeftCorner(k, k) = pinv_.topLeftCorner(k, k);
  q.topLeftCorner(k, k) = proj_.topLeftCorner(k, k);
  pinv_.swap(p);
  proj_.swap(q);
  Eigen::VectorXd h = Eigen::VectorXd::Zero(cc), a = Eigen::VectorXd::Zero(cc), d = Eigen::VectorXd::Ones(cc);
  h.head(k) = h_.head(k);
  a.head(k) = a_.head(k);
  d.head(k) = scale_.head(k);
  Eigen::VectorXd m = Eigen::VectorXd::Zero(cc);
  if (m_.size() >= k) m.head(k) = m_.head(k);
  h_.swap(h);
  a_.swap(a);
  scale_.swap(d);
  m_.swap(m);
}

bool ScinolFullLearner::insert_new(const SparseVector& v) {
  size_t fresh = 0;
  for (const Coord& c : v) fresh += index_.find(c.slot) == CompactIndex::kNone;
  if (fresh == 0) return false;
  if (index_.size() + fresh > opt_.cap)
    throw ConfigError(
        "scinol-full: this example would bring the distinct features to " +
        std::to_string(index_.size() + fresh) + ", past the cap of " + std::to_string(opt_.cap) +
        " (--max_dense_features; memory 16 n^2 bytes); use fewer bits (-b) or --learner scinol-coord");
  reserve(index_.size() + fresh);
  // A new slot enters outside the span: zero row and column in S^+ and P, h = a = 0 there (reserve zeroed
  // them).
  for (const Coord& c : v)
    if (index_.find(c.slot) == CompactIndex::kNone) {
      const uint32_t p = index_.insert(c.slot);
      scale_(p) = std::fabs(c.x);
      if (!published()) {  // scinol2: Sigma gains the diagonal entry M_i^2 = 1 (|x~| = 1), h = a = 0 there
        pinv_(p, p) = 1.0;
        m_(p) = 1.0;
      }
    }
  return true;
}

void ScinolFullLearner::gather(const SparseVector& v) const {
  seen_.clear();
  fresh_ = false;
  for (const Coord& c : v) {
    const uint32_t p = index_.find(c.slot);
    if (p == CompactIndex::kNone) {
      fresh_ = true;
      continue;
    }
    seen_.push_back({p, c.x / scale_(p)});
  }
}

ScinolFullLearner::Prepared ScinolFullLearner::prepare(const SparseVector& v, bool fresh) const {
  Prepared q;
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  u_.setZero(n);
  xp_.setZero(n);
  for (const Seen& s : seen_) {
    u_.noalias() += s.x * pinv_.col(s.position).head(n);
    xp_.noalias() -= s.x * proj_.col(s.position).head(n);
    q.r0 += a_(s.position) * s.x;
  }
  double norm2 = 0.0;
  for (const Seen& s : seen_) {
    q.b += s.x * u_(s.position);
    xp_(s.position) += s.x;
    norm2 += s.x * s.x;
  }
  const double perp2 = xp_.squaredNorm();
  // Once the span holds every feature seen (rank = n) x is in it whatever the rounding of x_perp says:
  // without this, P's rounding drift (amplified by k = 1/||x_perp||^2 for nearly dependent rows) declared
  // rows of a full span new directions again (on 578 pixel features, every example after the 800th: yhat = 0
  // from then on).
  const bool full = rank_ >= static_cast<uint64_t>(n);
  const ScinolRankOne s = scinol_rank_one(!fresh && (full || !(perp2 > opt_.tau * norm2)), q.b, q.r0, c_);
  q.new_direction = s.new_direction;
  q.cp = s.c;
  q.r = s.r;
  q.lev = s.lev;
  if (q.new_direction)
    q.k = perp2 > 0.0 ? 1.0 / perp2 : 0.0;  // 0 only for x outside every held feature (predict)
  return q;
}

ScinolRankOne scinol_rank_one(bool in_span, double s_xx, double s_xh, double s_hh) {
  if (!in_span) return {true, s_hh, 0.0, 1.0};  // Appendix E, case 2
  const double beta = 1.0 + s_xx;               // Sherman-Morrison for S + x x'
  return {false, s_hh - s_xh * s_xh / beta, s_xh / beta, s_xx / beta};
}

double scinol_eta(double c, double gamma, double alpha, uint64_t& caps) {
  double e = (c - gamma) / (2.0 * alpha);
  if (e > ScinolFullLearner::kMaxExponent) {
    e = ScinolFullLearner::kMaxExponent;
    ++caps;
  }
  return std::exp(e) / alpha;
}

double ScinolFullLearner::eta(double cp) const { return scinol_eta(cp, gamma_, opt_.alpha, caps_); }

double ScinolFullLearner::predict_score(const Example& x) const {
  const SparseVector& v = builder_.build(x);
  gather(v);
  if (!published()) {
    uint32_t fresh = 0;  // features never seen: each its own diagonal entry 1 (x~ = +-1), h = 0 there
    for (const Coord& c : v) fresh += index_.find(c.slot) == CompactIndex::kNone;
    return x.initial + played(prepare_bet(fresh));
  }
  // S_t includes x: the prediction is the one learning x would make.
  const Prepared q = prepare(v, fresh_);
  return x.initial + eta(q.cp) * q.r;
}

// scinol2, round t's quantities before the label, from Sigma_{t-1} = V_{t-1} + diag(M_{t-1}^2) over the held
// features: Sigma_t = Sigma_{t-1} + sum_k delta_k e_k e_k' for the features whose max |x~| grows (delta_k =
// x~_k^2 - M_k^2; Woodbury over them: K = diag(1/delta) + (Sigma^-1)_KK, k x k, Cholesky), fresh features
// (predict only) their own diagonal entry 1; lev = x'Sigma_t^-1 x, r = x'Sigma_t^-1 h, c = h'Sigma_t^-1 h.
ScinolFullLearner::Bet ScinolFullLearner::prepare_bet(uint32_t fresh) const {
  Bet q;
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  u_.setZero(n);
  double b = 0.0, r = 0.0, c = c_;
  for (const Seen& s : seen_) {
    u_.noalias() += s.x * pinv_.col(s.position).head(n);
    r += a_(s.position) * s.x;
  }
  grow_.clear();
  for (const Seen& s : seen_) {
    b += s.x * u_(s.position);
    const double m = m_(s.position);
    if (std::fabs(s.x) > m) grow_.push_back({s.position, s.x * s.x - m * m});
  }
  if (!grow_.empty()) {
    const Eigen::Index k = static_cast<Eigen::Index>(grow_.size());
    Eigen::MatrixXd kk(k, k);
    Eigen::VectorXd uk(k), ak(k);
    for (Eigen::Index i = 0; i < k; ++i) {
      const uint32_t pi = grow_[i].position;
      uk(i) = u_(pi);
      ak(i) = a_(pi);
      for (Eigen::Index j = 0; j < k; ++j) kk(i, j) = pinv_(pi, grow_[j].position);
      kk(i, i) += 1.0 / grow_[i].x;
    }
    const Eigen::LLT<Eigen::MatrixXd> llt(kk);
    const Eigen::VectorXd ku = llt.solve(uk), ka = llt.solve(ak);
    b -= uk.dot(ku);
    r -= uk.dot(ka);
    c -= ak.dot(ka);
  }
  q.lev = std::max(b, 0.0) + fresh;
  q.c = std::max(c, 0.0);
  q.r = r;
  return q;
}

// The bet: half the wealth, times min(1, 1/||theta||), ||theta||^2 = c = h'Sigma_t^-1 h (ScInOL2's
// sign(theta) min(|theta|, 1) eta / (2D), D^2 = Sigma_t, in matrix form).
double ScinolFullLearner::bet(double c) const { return 0.5 * wealth_ * (c > 1.0 ? 1.0 / std::sqrt(c) : 1.0); }

// yhat - initial = bet r, clamped to half the wealth: |bet r| <= (wealth/2) sqrt(lev) by Cauchy-Schwarz, and
// lev = x'Sigma_t^-1 x <= 1 in one dimension (ScInOL2's |x| <= M <= D) but up to the number of features here.
double ScinolFullLearner::played(const Bet& q) const {
  return std::clamp(bet(q.c) * q.r, -0.5 * wealth_, 0.5 * wealth_);
}

Prediction ScinolFullLearner::predict(const Example& x) const {
  return clip_.of(common::to_float(predict_score(x), caps_));
}

double ScinolFullLearner::round(const Example& x, bool use_loss, double g_linear) {
  const SparseVector& v = builder_.build(x);
  caps_ += v.dropped;
  const bool fresh = insert_new(v);
  gather(v);
  if (!published()) return round_scinol2(x, use_loss, g_linear);
  const Prepared q = prepare(v, fresh);
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  const double beta = 1.0 + q.b;
  // S^+ (and P) with x, written so that entry (i, j) and (j, i) get the same rounding: exactly symmetric.
  Eigen::VectorXd& sx = xp_;  // S_t^+ x, in place of x_perp once it has served
  if (!q.new_direction) {
    for (Eigen::Index j = 0; j < n; ++j) {
      const double uj = u_(j);
      for (Eigen::Index i = 0; i < n; ++i) pinv_(i, j) -= (u_(i) * uj) / beta;
    }
    sx = u_ / beta;
    a_.head(n) -= u_ * (q.r0 / beta);
  } else {
    ++rank_;
    const Eigen::VectorXd e = q.k * xp_;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double ej = e(j), uj = u_(j), xj = xp_(j);
      for (Eigen::Index i = 0; i < n; ++i) {
        pinv_(i, j) += beta * (e(i) * ej) - (u_(i) * ej + e(i) * uj);
        proj_(i, j) += q.k * (xp_(i) * xj);
      }
    }
    a_.head(n) -= xp_ * (q.k * q.r0);
    sx = e;
  }
  const double et = eta(q.cp);
  const double yhat = x.initial + et * q.r;
  double g = use_loss
                 ? loss_.first_derivative(clip_.clip(common::to_float(yhat, caps_)), x.label, clip_.range())
                 : g_linear;
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  c_ = q.cp - 2.0 * g * q.r + g * g * q.lev;
  a_.head(n) -= g * sx;
  for (const Seen& s : seen_) h_(s.position) -= g * s.x;
  gamma_ += g * g * q.lev;
  last_ = Last{q.new_direction, et, yhat, g, q.lev};
  return yhat;
}

// scinol2, one round: the bet from prepare_bet; the wealth takes -g (yhat - initial); then Sigma takes the
// grown maxima (Sherman-Morrison per feature) and V's g^2 x x' (one rank-one update along x), and h -= g x,
// with a = Sigma^-1 h and c = h'Sigma^-1 h carried along.
double ScinolFullLearner::round_scinol2(const Example& x, bool use_loss, double g_linear) {
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  const Bet q = prepare_bet(0);
  const double f = bet(q.c), play = played(q);
  const double yhat = x.initial + play;
  double g = use_loss
                 ? loss_.first_derivative(clip_.clip(common::to_float(yhat, caps_)), x.label, clip_.range())
                 : g_linear;
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  wealth_ -= g * play;  // |play| <= wealth/2 and |g| <= 1: a round loses at most half the wealth
  if (wealth_ > kMaxWealth) [[unlikely]] {
    wealth_ = kMaxWealth;
    ++caps_;
  }
  // The grown maxima: Sigma += delta e_p e_p'.
  for (const Seen& gr : grow_) {
    const uint32_t p = gr.position;
    const double delta = gr.x;
    col_ = pinv_.col(p).head(n);
    const double beta = 1.0 + delta * col_(p), ap = a_(p), k = delta / beta;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double cj = col_(j);
      for (Eigen::Index i = 0; i < n; ++i) pinv_(i, j) -= (col_(i) * cj) * k;
    }
    a_.head(n) -= col_ * (k * ap);
    c_ -= k * ap * ap;
  }
  for (const Seen& s : seen_) m_(s.position) = std::max(m_(s.position), std::fabs(s.x));
  // Sigma += mu x x', h -= g x.
  u_.setZero(n);
  double b = 0.0, r = 0.0;
  for (const Seen& s : seen_) {
    u_.noalias() += s.x * pinv_.col(s.position).head(n);
    r += a_(s.position) * s.x;
  }
  for (const Seen& s : seen_) b += s.x * u_(s.position);
  const double mu = g * g, den = 1.0 + mu * b, xa = r - g * b, k = mu / den;
  if (mu > 0.0) {
    for (Eigen::Index j = 0; j < n; ++j) {
      const double uj = u_(j);
      for (Eigen::Index i = 0; i < n; ++i) pinv_(i, j) -= (u_(i) * uj) * k;
    }
  }
  a_.head(n) -= u_ * (g + k * xa);
  c_ = std::max(c_ - 2.0 * g * r + g * g * b - k * xa * xa, 0.0);
  for (const Seen& s : seen_) h_(s.position) -= g * s.x;
  last_ = Last{false, f, yhat, g, q.lev};
  return yhat;
}

Prediction ScinolFullLearner::learn(const Example& x) {
  clip_.see(x);
  if (!common::teaches(x)) return predict(x);
  return clip_.of(common::to_float(round(x, true), caps_));
}

double ScinolFullLearner::h(uint64_t slot) const {
  const uint32_t p = index_.find(slot);
  return p == CompactIndex::kNone ? 0.0 : h_(p) * scale_(p);  // h = D h~
}

double ScinolFullLearner::pinv(uint64_t i, uint64_t j) const {
  const uint32_t p = index_.find(i), q = index_.find(j);
  // S^+ = D^-1 S~^+ D^-1
  return p == CompactIndex::kNone || q == CompactIndex::kNone ? 0.0 : pinv_(p, q) / (scale_(p) * scale_(q));
}

double ScinolFullLearner::projector(uint64_t i, uint64_t j) const {
  const uint32_t p = index_.find(i), q = index_.find(j);
  // P = D P~ D^-1
  return p == CompactIndex::kNone || q == CompactIndex::kNone ? 0.0 : scale_(p) * proj_(p, q) / scale_(q);
}

std::vector<std::string> ScinolFullLearner::describe() const {
  if (!published())
    return {"scinol_full_variant = scinol2", "scinol_full_eps = " + common::number(opt_.eps),
            "scinol_L = " + common::number(opt_.lipschitz),
            "matrix = full, up to " + std::to_string(opt_.cap) + " features"};
  return {"scinol_full_variant = published", "scinol_alpha = " + common::number(opt_.alpha),
          "scinol_L = " + common::number(opt_.lipschitz),
          "matrix = full, up to " + std::to_string(opt_.cap) + " features"};
}

// Version 2: the variant, ε and the wealth after -b; a version-1 state is the published algorithm's, without a
// wealth. Then α, L, the feature cap, the label range, c, Γ, the features held and h, a, the scales d, S^+ and
// P (published) or the maxima M (scinol2) over them; readable: "slot:a_i h_i" in the features' own units.
template <class Self, class V>
void ScinolFullLearner::state(Self& self, V& v) {
  const uint32_t version = v.versions(1, kStateVersion);
  v.fixed("bits", static_cast<uint32_t>(self.bits_));
  bool pub = true;
  if (version >= 2) {
    pub = v.template choice<uint32_t>("scinol_full_variant", self.opt_.variant, {"scinol2", "published"}) ==
          ScinolFullVariant::kPublished;
    v.number("scinol_full_eps", self.opt_.eps, common::kPositive);
    v.number("wealth", self.wealth_, common::kNonNegative);
  } else {
    v.absent(self.opt_.variant, ScinolFullVariant::kPublished);
    v.absent(self.wealth_, 0.0);
  }
  v.number("scinol_alpha", self.opt_.alpha, common::above(kAlphaMin));
  v.number("scinol_L", self.opt_.lipschitz, common::kPositive);
  const uint64_t cap = v.whole("cap", self.opt_.cap, 1, kMaxCap);
  v.clip(self.clip_);
  v.number("c", self.c_, common::kNonNegative);
  v.number("Gamma", self.gamma_, common::kNonNegative);
  const uint64_t n = v.index("features", self.index_, cap), size = std::max<uint64_t>(n, 1);
  const auto k = static_cast<Eigen::Index>(size);
  v.vector("h", self.h_, n, size);
  v.vector("a", self.a_, n, size);
  const Eigen::VectorXd& d = v.vector("feature_scales", self.scale_, n, size, 1.0);
  v.check((d.head(static_cast<Eigen::Index>(n)).array() > 0.0).all(), "a feature scale <= 0");
  v.upper("pseudo_inverse", self.pinv_, n, size);
  if (pub) {
    v.upper("projector", self.proj_, n, size);
    v.absent_made(self.m_, [k] { return Eigen::VectorXd(Eigen::VectorXd::Zero(k)); });
  } else {  // scinol2: no projector (Sigma is invertible), the maxima M instead
    const Eigen::VectorXd& m = v.vector("maxima", self.m_, n, size);
    v.check((m.head(static_cast<Eigen::Index>(n)).array() > 0.0).all(), "a feature maximum <= 0");
    v.absent_made(self.proj_, [k] { return Eigen::MatrixXd(Eigen::MatrixXd::Zero(k, k)); });
  }
  v.lines([&self](std::ostream& out) {  // a_i = (S^+ h)_i at eta = 1 (the played weight is eta_t times it)
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (uint32_t p = 0; p < self.index_.size(); ++p) order.push_back({self.index_.slot(p), p});
    std::sort(order.begin(), order.end());
    for (const auto& [slot, p] : order)
      out << slot << ":" << self.a_(p) / self.scale_(p) << " " << self.h_(p) * self.scale_(p) << "\n";
  });
}

void ScinolFullLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void ScinolFullLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void ScinolFullLearner::load(ModelReader& in) {
  common::load_state(*this, in);
  const auto n = static_cast<Eigen::Index>(index_.size());
  rank_ = static_cast<uint64_t>(std::llround(proj_.topLeftCorner(n, n).trace()));  // P's trace is its rank
}

LearnerRow scinol_full_row() {
  using Kind = OptionSpec::Kind;
  LearnerRow row{
      "scinol-full",
      "no learning rate, predictions unchanged by any invertible linear map of the features: second order, "
      "for up to a few thousand dense features (Kotlowski 2017, Algorithm 2)",
      {
          {"scinol_full_variant",
           "",
           Kind::kText,
           "scinol2",
           "scinol2 (a coin-betting wealth and a matrix of gradients, ScInOL2 of Kempka, Kotlowski, Warmuth "
           "2019 "
           "carried to the full matrix: learns from the first examples) or published (Algorithm 2 of "
           "Kotlowski "
           "2017, whose prior bets nearly 0 for a whole pass on many dense features)",
           {},
           {"scinol2", "published"}},
          {"scinol_full_eps",
           "",
           Kind::kNumber,
           "1",
           "scinol2 variant: the wealth each new dimension of the features' span brings (how much it may "
           "lose)",
           {0.0, std::numeric_limits<double>::infinity(), true, false},
           {}},
          scinol_alpha_option(),
          scinol_lipschitz_option(),
          common::matrix_option({"full", "sketch"}),
          common::rank_option(),
          common::max_dense_option(4096),
      },
      [](const LearnerContext& c) -> std::unique_ptr<Learner> {
        const ScinolFullOptions o = ScinolFullOptions::from(c.options);
        if (common::matrix_kind_of(c.options, MatrixKind::kFull) == MatrixKind::kSketch)
          return std::make_unique<ScinolSketchLearner>(o, common::rank_of(c.options), c.loss, c.bits,
                                                       c.test_only);
        return std::make_unique<ScinolFullLearner>(o, c.loss, c.bits, c.test_only);
      }};
  row.traits.matrix_modes = {"full", "sketch"};
  row.traits.matrix_nearest = {{"diag", "--learner scinol-coord (scinol-full's diagonal form)"}};
  row.traits.merge =
      "the ranks' mean h and S (their Frequent Directions sketches concatenated and shrunk), betting with "
      "the "
      "ranks' mean confidence; an approximation of one learner over all the data, exact with one rank";
  row.traits.merge_matrix = "sketch";
  return row;
}

}  // namespace lepus
