// aioli: see aioli.h for the algorithm, its paper and equations.
#include "learners/aioli.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "core/splitmix.h"
#include "learners/common/matrix_option.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

// 2: b kept by the matrix; 3: the feature scales; 4: the sketch's c; 5: the loss's rule (logistic or squared)
constexpr uint32_t kStateVersion = 5;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSketchDiagonal = 0.0;  // --aioli_sketch_diagonal's default

}  // namespace

AioliOptions AioliOptions::from(const OptionValues& v) {
  AioliOptions o;
  check_option_values(aioli_row().options, v);  // ranges and choices declared once in the row
  if (v.has("aioli_B")) o.radius = v.number("aioli_B");
  if (v.has("aioli_lambda")) o.lambda = v.number("aioli_lambda");
  if (v.has("aioli_R")) o.r = v.number("aioli_R");
  o.matrix = common::matrix_kind_of(v);
  o.rank = common::rank_of(v);
  o.max_dense = common::max_dense_of(v);
  o.beyond = common::beyond_dense_of(v);
  o.o2b = v.has("aioli_o2b") && v.text("aioli_o2b") == "1";
  o.scale = !v.has("aioli_scale") || v.text("aioli_scale") == "feature";
  o.sketch_diagonal = v.has("aioli_sketch_diagonal") ? v.number("aioli_sketch_diagonal") : kSketchDiagonal;
  return o;
}

double aioli_root(double s, double c) {
  if (c == 0.0 || !(s > 0.0)) return c;
  // f(z) = z + (s/2) tanh(z/2) - c is increasing (f' >= 1); the root has c's sign, |root| <= |c|, and lies
  // within s/2 of c.
  double lo = std::min(0.0, c), hi = std::max(0.0, c);
  lo = std::max(lo, c - 0.5 * s);
  hi = std::min(hi, c + 0.5 * s);
  double z = std::clamp(c / (1.0 + 0.25 * s), lo, hi);
  for (int it = 0; it < 200; ++it) {
    const double t = std::tanh(0.5 * z);
    const double f = z + 0.5 * s * t - c;
    if (f == 0.0) return z;
    if (f > 0.0) {
      hi = z;
    } else {
      lo = z;
    }
    const double fp = 1.0 + 0.25 * s * (1.0 - t * t);
    double next = z - f / fp;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);  // Newton left the bracket: bisect
    if (std::fabs(next - z) <= 1e-15 * std::max(1.0, std::fabs(z)) ||
        hi - lo <= 1e-15 * std::max(1.0, std::fabs(z)))
      return next;
    z = next;
  }
  return z;
}

AioliStep aioli_step(double m, double y, double one_plus_br) {
  // sigma(m) sigma(-m) = 1 / (2 + 2 cosh m): 0 once cosh overflows (|m| > 710), as the curvature vanishes.
  const double ss = 1.0 / (2.0 + 2.0 * std::cosh(m));
  const double sm = m >= 0.0 ? std::exp(-m) / (1.0 + std::exp(-m)) : 1.0 / (1.0 + std::exp(m));  // sigma(-m)
  const double mss = std::isfinite(ss) && ss > 0.0 ? m * ss : 0.0;
  return AioliStep{ss / (2.0 * one_plus_br), 0.5 * y * (sm + mss / one_plus_br)};
}

namespace {
// AIOLI's sketch has no regret bound either way (Jézéquel, Gaillard, Rudi 2020 prove Theorem 1 for the exact
// A only); the plain sketch λI + BᵀB learns far better on sparse data than one with the shrinkage mass added
// back (sketch_matrix.h).
MatrixOptions aioli_matrix(const AioliOptions& o, int bits) {
  MatrixOptions m = common::matrix_options(o.matrix, o.ridge(), bits, o.rank, o.max_dense);
  m.sketch_shrink_back = 0.0;
  m.sketch_diagonal = o.sketch_diagonal;
  m.beyond = o.beyond;
  m.tracked = true;  // b, so that c = x'A^-1 b costs what s = x'A^-1 x costs
  if (o.full_cap > 0) m.full_cap = o.full_cap;
  return m;
}
}  // namespace

AioliLearner::AioliLearner(const AioliOptions& options, const Loss& loss, int bits, bool test_only,
                           uint64_t random_seed)
    : opt_(options),
      bits_(bits),
      clip_(loss.initial_range(), test_only),
      a_(make_matrix(aioli_matrix(options, bits))),
      squared_(loss.name() == "squared"),
      test_only_(test_only),
      seed_(random_seed),
      scale_(options.scale ? bits : 0),
      builder_(bits) {
  opt_.lambda = opt_.ridge();  // the default 1/B^2 resolved: the state holds λ
}

const SparseVector& AioliLearner::input(const Example& x, bool learn) const {
  thread_local Scaled mine;
  const SparseVector& v = learn ? builder_.build(x) : common::thread_builder(bits_).build(x);
  if (!opt_.scale) return v;
  Scaled& out = learn ? scaled_ : mine;
  out.coords.assign(v.begin(), v.end());
  for (Coord& c : out.coords) {
    const double a = std::fabs(c.x), s = scale_[c.slot];
    if (a > s) {
      if (learn) const_cast<TrackedVector&>(scale_).set(c.slot, a);
      c.x = c.x > 0.0 ? 1.0 : -1.0;
    } else {
      c.x /= s;
    }
  }
  out.view = SparseVector{out.coords.data(), out.coords.size(), v.dropped};
  return out.view;
}

namespace {
// A uniform draw in [0, 1) from (seed, t) alone (splitmix64), so a resumed run draws what an uninterrupted
// one does without saving a generator.
double uniform(uint64_t seed, uint64_t t) {
  return unit_interval(
      splitmix64_mix(seed * 0x9E3779B97F4A7C15ull + t * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull));
}

std::vector<uint8_t> bytes_of(const Matrix& m) {
  ModelWriter w;
  m.save(w);
  return w.bytes();
}
}  // namespace

void AioliLearner::take_snapshot() {
  const std::vector<uint8_t> bytes = bytes_of(*a_);
  std::unique_ptr<Matrix> copy = make_matrix(aioli_matrix(opt_, bits_));
  ModelReader in(bytes.data(), bytes.size(), "aioli snapshot");
  copy->load(in);
  snap_a_ = std::move(copy);
  snap_round_ = rounds_ + 1;
}

AioliLearner::Round AioliLearner::evaluate(const SparseVector& v, double initial) const {
  return evaluate_with(*a_, v, initial);
}

AioliLearner::Round AioliLearner::evaluate_with(const Matrix& a, const SparseVector& v,
                                                double initial) const {
  Round r;
  const Matrix::Products p = a.products(std::span<const Coord>(v.begin(), v.size()));
  r.s = p.quad;
  r.c = p.cross;
  if (!std::isfinite(r.s) || !std::isfinite(r.c)) [[unlikely]] {
    ++safeguards_;
    r.s = std::isfinite(r.s) ? r.s : 0.0;
    r.c = std::isfinite(r.c) ? r.c : 0.0;
  }
  r.yhat = (squared_ ? r.c / (1.0 + r.s) : aioli_root(r.s, r.c)) + initial;
  return r;
}

AioliLearner::Round AioliLearner::evaluate(const Example& x) const {
  return evaluate(input(x, false), x.initial);
}

Prediction AioliLearner::output(double yhat) const { return clip_.of(common::to_float(yhat, safeguards_)); }

double AioliLearner::predict_o2b(const Example& x) const {
  const SparseVector& v = input(x, false);
  return snap_a_ ? evaluate_with(*snap_a_, v, x.initial).yhat : evaluate(v, x.initial).yhat;
}

// A -t run of an --aioli_o2b model predicts with the snapshot (the online-to-batch predictor).
Prediction AioliLearner::predict(const Example& x) const {
  return output(opt_.o2b && test_only_ ? predict_o2b(x) : evaluate(x).yhat);
}

Prediction AioliLearner::learn(const Example& x) {
  clip_.see(x);
  const SparseVector& v = input(x, common::teaches(x));  // s grows exactly when learn_round updates A
  safeguards_ += v.dropped;
  if (test_only_ && opt_.o2b) return output(predict_o2b(x));
  return learn_round(v, x.initial, common::teaches(x),
                     squared_ ? static_cast<double>(x.label) - x.initial : (x.label > 0.0f ? 1.0 : -1.0),
                     static_cast<double>(x.weight), squared_ ? 0.0 : std::sqrt(v.norm2()));
}

double AioliLearner::learn_vector(const SparseVector& v, double y, double weight, double initial,
                                  double norm) {
  double yhat = 0.0;
  learn_round(v, initial, weight > 0.0, y, weight, norm, &yhat);
  return yhat;
}

Prediction AioliLearner::learn_round(const SparseVector& v, double initial, bool teach, double y,
                                     double weight, double norm, double* yhat) {
  const Round round = evaluate(v, initial);
  if (yhat) *yhat = round.yhat;
  const Prediction p = output(round.yhat);
  if (!teach || v.size() == 0) return p;
  if (opt_.o2b && uniform(seed_, rounds_ + 1) * static_cast<double>(rounds_ + 1) < 1.0) take_snapshot();
  ++rounds_;
  if (squared_) {  // A += w x xᵀ, b += w y x (no radius: only the logistic rule's B r reads it)
    a_->update(std::span<const Coord>(v.begin(), v.size()), weight, weight * y);
    return p;
  }
  r_max_ = std::max(r_max_, norm);
  // The surrogate at the played prediction (the float reported), as Theorem 7 assumes.
  const AioliStep st = aioli_step(y * static_cast<double>(p.raw), y, 1.0 + opt_.radius * r());
  const double kappa = weight * st.kappa, beta = weight * st.beta;
  if (!std::isfinite(kappa) || !std::isfinite(beta)) [[unlikely]] {
    ++safeguards_;
    return p;
  }
  a_->update(std::span<const Coord>(v.begin(), v.size()), kappa, beta);
  return p;
}

std::vector<std::string> AioliLearner::describe() const {
  return {
      "aioli B = " + common::number(opt_.radius), "aioli lambda = " + common::number(opt_.ridge()),
      opt_.r ? "aioli R = " + common::number(*opt_.r) : std::string("aioli R = largest ||x|| so far"),
      std::string("aioli scale = ") + (opt_.scale ? "each feature by its largest |value| so far" : "none"),
      "matrix = " + std::string(matrix_kind_name(opt_.matrix)) +
          (opt_.matrix == MatrixKind::kSketch || opt_.matrix == MatrixKind::kAuto
               ? ", rank " + std::to_string(opt_.rank) +
                     (opt_.sketch_diagonal > 0.0
                          ? ", diagonal correction " + common::number(opt_.sketch_diagonal)
                          : std::string())
               : std::string()) +
          (opt_.matrix == MatrixKind::kAuto
               ? ", full up to " + std::to_string(opt_.max_dense) + " features, then " +
                     std::string(matrix_kind_name(opt_.beyond))
               : std::string())};
}

// Versions: 2 b kept by the matrix; 3 the feature scales; 4 the sketch's c; 5 the loss's rule. The matrix
// component loaded is made with the state's own λ and c; readable: b's nonzero entries as "slot:b_slot".
template <class Self, class V>
void AioliLearner::state(Self& self, V& v) {
  const uint32_t version = v.versions(2, kStateVersion);
  AioliOptions o = self.opt_;  // with the state's values, for the components it makes
  o.radius = v.number("aioli_B", self.opt_.radius, common::kPositive);
  o.lambda = v.number("aioli_lambda", *self.opt_.lambda, common::kPositive);  // resolved by the constructor
  v.optional("aioli_R", self.opt_.r, common::kNonNegative);
  v.number("largest_norm", self.r_max_, common::kNonNegative);
  const std::string other = "saved with another --matrix or --rank than this run's";
  v.fixed("matrix", static_cast<uint8_t>(self.opt_.matrix), other);
  v.fixed("rank", self.opt_.rank, other);
  if (version >= 4) {
    o.sketch_diagonal =
        v.number("aioli_sketch_diagonal", self.opt_.sketch_diagonal, common::Bounds{{0.0, 1e6}});
  } else {
    o.sketch_diagonal = 0.0;
    v.absent(self.opt_.sketch_diagonal, 0.0);
  }
  const auto rule = [](bool squared) { return squared ? "squared" : "logistic"; };
  const std::string mismatch = std::string("learned with the ") + rule(!self.squared_) +
                               " loss; it cannot continue or predict under the " + rule(self.squared_) +
                               " loss (leave out --loss_function)";
  if (version >= 5)
    v.fixed("rule", static_cast<uint8_t>(self.squared_ ? 1 : 0), mismatch);
  else if (self.squared_)
    v.refuse(mismatch);  // before 5: the logistic rule only
  v.clip(self.clip_);
  const int bits = self.bits_;
  auto matrix = [&o, bits] { return make_matrix(aioli_matrix(o, bits)); };
  v.part("A", self.a_, matrix, [](std::ostream& out, const Matrix& a) {
    a.tracked().for_each_nonzero([&](uint64_t i, double bi) { out << i << ":" << bi << "\n"; });
  });
  o.o2b = v.flag("aioli_o2b", self.opt_.o2b);
  v.whole("seed", self.seed_);
  const uint64_t rounds = v.whole("rounds", self.rounds_);
  const uint64_t snap = v.whole("snapshot_round", self.snap_round_);
  v.check(snap <= rounds && (snap == 0 || o.o2b), "snapshot round out of range");
  if (snap > 0)
    v.part("snapshot", self.snap_a_, matrix, [](std::ostream&, const Matrix&) {});
  else
    v.absent(self.snap_a_, nullptr);
  const bool scale = version >= 3 ? v.flag("aioli_scale", self.opt_.scale) : false;
  if (version < 3) v.absent(self.opt_.scale, false);
  if (scale)
    v.tracked("scale", self.scale_, bits, [](double s) { return s > 0.0; });
  else
    v.absent(self.scale_, TrackedVector());
}

void AioliLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void AioliLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void AioliLearner::load(ModelReader& in) { common::load_state(*this, in); }

LearnerRow aioli_row() {
  using Kind = OptionSpec::Kind;
  LearnerRow row{
      "aioli",
      "improper online logistic regression, second order: predictions shrink toward 0 on inputs unlike the "
      "past (Jezequel, Gaillard, Rudi 2020, AIOLI); with --loss_function squared, the Vovk-Azoury-Warmuth "
      "forecaster, its counterpart for regression",
      {
          {"aioli_B",
           "",
           Kind::kNumber,
           "1",
           "radius of the weight ball AIOLI competes with (its curvature scales as 1/(1+B R))",
           {0.0, kInf, true, false}},
          {"aioli_lambda",
           "",
           Kind::kNumber,
           "",
           "ridge of the prior A = lambda I (default 1/B^2)",
           {0.0, kInf, true, false}},
          {"aioli_R",
           "",
           Kind::kNumber,
           "",
           "bound on the examples' norm ||x|| (default: the largest norm seen so far, saved in the model)",
           {0.0, kInf, true, false}},
          common::matrix_option({"auto", "full", "diag", "sketch"}),
          common::rank_option(),
          common::max_dense_option(),
          common::beyond_dense_option(),
          {"aioli_sketch_diagonal",
           "",
           Kind::kNumber,
           common::number(kSketchDiagonal),
           "sketch mode: the share of each feature's variance the sketch discarded that returns as that "
           "feature's own ridge (0: the plain sketch; docs/algorithms/aioli.md)",
           {0.0, 1e6, false, false}},
          {"aioli_scale",
           "",
           Kind::kText,
           "feature",
           "feature: each feature divided by the largest |value| it has had so far (saved in the model), so "
           "raw, "
           "unscaled data learns as well as scaled; none: the features as given (the published algorithm)",
           {},
           {"feature", "none"}},
          {"aioli_o2b", "", Kind::kFlag, "",
           "online to batch: keep the state of a round drawn at random (seeded by --random_seed, saved in "
           "the "
           "model) and let -t runs predict with it; for i.i.d. data this has the paper's excess-risk "
           "guarantee"},
      },
      [](const LearnerContext& c) {
        return std::make_unique<AioliLearner>(AioliOptions::from(c.options), c.loss, c.bits, c.test_only,
                                              c.random_seed);
      }};
  row.traits.losses = {"logistic", "squared"};
  // Measured with the squared loss in the default mixture: --csoaa 10 on mnist_t10k 2.19x sgd's time (1.92x
  // without) and a worse loss (0.1243 against 0.1239); yearpredictionmsd test RMSE 24.69 against 21.3.
  row.traits.mixture_losses = {"logistic"};
  row.traits.matrix_modes = {"auto", "full", "diag", "sketch"};
  return row;
}

}  // namespace lepus
