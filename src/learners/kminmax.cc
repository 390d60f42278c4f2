// kwemm and klaser: see kminmax.h for the algorithms, the thesis and the equations.
#include "learners/kminmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "learners/common/plumbing.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 1;          // one problem
constexpr uint32_t kProblemsStateVersion = 2;  // K problems over one embedding (share_points)
constexpr uint64_t kLandmarkSalt = 0x5851F42D4C957F2Dull;
const KorsOptions kLandmarkSampler{1.0, 0.5,
                                   30.0};  // KORS's α, ε, β for the landmarks (kernels normalised to 1)

}  // namespace

KernelMinmaxOptions KernelMinmaxOptions::from(const MinmaxRule& rule, const OptionValues& v) {
  for (const auto& row : kernel_minmax_rows())
    if (row.name == (rule.drift ? "klaser" : "kwemm")) check_option_values(row.options, v);
  KernelMinmaxOptions o;
  o.rule = &rule;
  o.kernel = common::kernel_params_of(v);
  if (v.has("mm_b")) o.b = v.number("mm_b");
  if (rule.drift && v.has("mm_c")) o.c = v.number("mm_c");
  o.budget = common::budget_of(v);
  if (o.b && o.c && !(*o.b < *o.c))
    throw ConfigError("--learner klaser needs --mm_b < --mm_c (b = " + common::number(*o.b) +
                      ", c = " + common::number(*o.c) + ")");
  return o;
}

KernelMinmaxLearner::KernelMinmaxLearner(const KernelMinmaxOptions& options, int bits, uint64_t random_seed)
    : opt_(options), bits_(bits), seed_(random_seed), kernel_(options.kernel), builder_(bits) {
  if (opt_.budget > 0)
    nystrom_ = std::make_unique<NystromEmbedding>(kernel_.kernel(), kLandmarkSampler, opt_.budget);
}

uint64_t KernelMinmaxLearner::warmup_wanted() const {
  const bool scale_needed = b_ == 0.0 && (!opt_.b || (opt_.rule->drift && !opt_.c));  // b or c from κ̂
  return rounds_ == 0 && (kernel_.pending() || scale_needed) ? common::kKernelWarmup : 0;
}

void KernelMinmaxLearner::warmup(std::span<const Example> prefix) {
  if (warmup_wanted() == 0) return;
  kernel_.estimate(prefix, builder_);
  double kappa = 0.0;
  for (const Example& x : prefix)
    kappa = std::max(kappa, kernel_.kernel().self(kernels::sorted_point(builder_.build(x), buffer_)));
  resolve(kappa);
}

// b and c from the options, else from κ̂ (kwemm b = 2κ̂; klaser c = 100κ̂, b = 0.1κ̂; one given: b = 0.01c, c =
// 100b).
void KernelMinmaxLearner::resolve(double kappa) {
  if (b_ > 0.0) return;
  if (!(kappa > 0.0) || !std::isfinite(kappa) || kappa > 1e150) kappa = 1.0;
  if (opt_.rule->drift) {
    c_ = opt_.c ? *opt_.c : opt_.b ? 100.0 * *opt_.b : 100.0 * kappa;
    b_ = opt_.b ? *opt_.b : opt_.c ? 0.01 * c_ : 0.1 * kappa;
  } else {
    b_ = opt_.b ? *opt_.b : 2.0 * kappa;
    c_ = 0.0;
  }
  if (!opt_.b || (opt_.rule->drift && !opt_.c)) scale_ = kappa;
  if (nystrom_) make_inner();
}

// The budget's primal learner over the landmarks' coordinates (full matrix, at most B of them).
std::vector<std::unique_ptr<MinmaxLearner>> KernelMinmaxLearner::inner_learners(double b, double c) const {
  MinmaxOptions o;
  o.rule = opt_.rule;
  o.b = b;
  o.c = opt_.rule->drift ? c : 100.0;
  o.matrix = MatrixKind::kFull;
  o.max_dense = std::max<uint64_t>(opt_.budget, 1);
  std::vector<std::unique_ptr<MinmaxLearner>> inner;
  for (uint32_t p = 0; p < problems_; ++p) inner.push_back(std::make_unique<MinmaxLearner>(o, 32));
  return inner;
}

double KernelMinmaxLearner::sigma() const {
  return opt_.rule->drift ? 1.0 / b_ + static_cast<double>(rounds_) / c_ : 1.0 / b_;
}

const SparseVector& KernelMinmaxLearner::embedded(kernels::PointRef x) const {
  nystrom_->embed(x, psi_);
  return as_vector(psi_);
}

// ψ as the sparse vector the primal learner reads: a slot per landmark.
const SparseVector& KernelMinmaxLearner::as_vector(const Eigen::VectorXd& psi) const {
  psi_vector_ = common::dense_as_sparse(psi, coords_);
  return psi_vector_;
}

Prediction KernelMinmaxLearner::predict(const Example& x) const {
  const kernels::PointRef px = kernels::sorted_point(builder_.build(x), buffer_);
  double y = x.initial;
  if (b_ > 0.0 && nystrom_) {
    y += inner_[0]->predict_vector(embedded(px));
  } else if (b_ > 0.0 && points_.size() > 0) {
    const auto n = static_cast<Eigen::Index>(points_.size());
    k_.resize(n);
    points_.row(kernel_.kernel(), px, k_.data());
    const double p = alpha_.head(n).dot(k_);
    double m = 0.0;
    if (opt_.rule->shrink) {
      g_.noalias() = beta_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>() * k_;
      m = sigma() * kernel_.kernel().self(px) + k_.dot(g_);
    }
    y += opt_.rule->shrink ? p / (1.0 + m) : p;
  }
  const float f = common::to_float(y, safeguards_);
  return Prediction{f, f};
}

Prediction KernelMinmaxLearner::learn(const Example& x) {
  if (nystrom_) {  // one problem's step
    const ProblemStep step{0, x.label, common::teaches(x) ? x.weight : 0.0f};
    Prediction out;
    learn_problems(x, {&step, 1}, {&out, 1});
    return out;
  }
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  if (!common::teaches(x)) return predict(x);
  if (kernel_.pending()) kernel_.estimate_from(v);  // no warm-up: a caller that is not the driver
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  resolve(kernel_.kernel().self(px));
  const double y = static_cast<double>(x.label) - x.initial;
  const float f = common::to_float(learn_exact(px, y, x.weight, x.initial) + x.initial, safeguards_);
  return Prediction{f, f};
}

bool KernelMinmaxLearner::share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) {
  if (nystrom_) return false;
  points_.share(std::move(cache));
  return true;
}

bool KernelMinmaxLearner::share_points(uint32_t problems) {
  if (!nystrom_ || problems < 1) return false;
  problems_ = problems;
  if (!inner_.empty()) make_inner();
  return true;
}

void KernelMinmaxLearner::predict_problems(const Example& x, std::span<Prediction> out) const {
  const SparseVector& v = embedded(kernels::sorted_point(builder_.build(x), buffer_));
  for (size_t p = 0; p < problems_ && p < out.size(); ++p) {
    const float f =
        common::to_float(x.initial + (b_ > 0.0 ? inner_[p]->predict_vector(v) : 0.0), safeguards_);
    out[p] = Prediction{f, f};
  }
}

// --budget: the problems of one example (one under learn(), or K: share_points). ψ(x) is computed (and
// offered as a landmark before x is learned from, when a step teaches) once, then each step is its problem's
// primal step on it.
void KernelMinmaxLearner::learn_problems(const Example& x, std::span<const ProblemStep> steps,
                                         std::span<Prediction> out) {
  const SparseVector& v = builder_.build(x);
  safeguards_ += v.dropped;
  bool teaches = false;
  for (const ProblemStep& s : steps) teaches = teaches || s.weight > 0.0f;
  if (kernel_.pending() && teaches) kernel_.estimate_from(v);
  const kernels::PointRef px = kernels::sorted_point(v, buffer_);
  if (teaches) resolve(kernel_.kernel().self(px));
  embedded(px);
  if (teaches) nystrom_->offer(px, psi_, common::hashed_uniform(seed_ ^ kLandmarkSalt, rounds_));
  const SparseVector& psi = as_vector(psi_);
  for (size_t i = 0; i < steps.size(); ++i) {
    MinmaxLearner* inner = b_ > 0.0 ? inner_[steps[i].problem].get() : nullptr;
    const double y = static_cast<double>(steps[i].label) - x.initial;
    const double yhat = !inner                   ? 0.0
                        : steps[i].weight > 0.0f ? inner->learn_vector(psi, y, steps[i].weight)
                                                 : inner->predict_vector(psi);
    const float f = common::to_float(yhat + x.initial, safeguards_);
    out[i] = Prediction{f, f};
  }
  if (teaches) ++rounds_;
}

double KernelMinmaxLearner::learn_exact(kernels::PointRef px, double y, double weight, double initial) {
  const auto n = static_cast<Eigen::Index>(points_.size());
  k_.resize(n);
  points_.row(kernel_.kernel(), px, k_.data());
  const double kappa = kernel_.kernel().self(px), sig = sigma();
  g_.resize(n);
  if (n > 0) g_.noalias() = beta_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>() * k_;
  const double m = sig * kappa + (n > 0 ? k_.dot(g_) : 0.0), p = n > 0 ? alpha_.head(n).dot(k_) : 0.0;
  const double yhat = opt_.rule->shrink ? p / (1.0 + m) : p;
  last_m_ = m;
  // The round taught as (s φ, s y): s = √k (importance weight k), times WEMM's guard when s² m >= 1 - ε.
  double s = std::sqrt(weight), ms = weight * m;
  if (opt_.rule->weight == MinmaxRule::Weight::kWemm && ms >= 1.0 - kWemmEps) {
    ++safeguards_;
    s *= std::sqrt((1.0 - kWemmEps) / ms);
    ms = 1.0 - kWemmEps;
  }
  const double f = opt_.rule->shrink || opt_.rule->drift ? 1.0 / (1.0 + ms) : 1.0;
  const double r = s * (y - p);
  if (!std::isfinite(m) || !(m >= 0.0) || !std::isfinite(r) || !std::isfinite(kappa) || !(s > 0.0)) {
    ++safeguards_;
    return yhat;
  }
  // Grow α and β by one (capacity doubles), then α += f r h, β -= f h hᵀ with h = s [g; σ].
  if (alpha_.size() <= n) {
    const Eigen::Index cap = std::max<Eigen::Index>(16, 2 * alpha_.size());
    Eigen::VectorXd a = Eigen::VectorXd::Zero(cap);
    a.head(n) = alpha_.head(n);
    alpha_.swap(a);
    Eigen::MatrixXd b = Eigen::MatrixXd::Zero(cap, cap);
    b.topLeftCorner(n, n) = beta_.topLeftCorner(n, n);
    beta_.swap(b);
  }
  g_ *= s;
  const double hn = s * sig;
  if (n > 0) {
    alpha_.head(n) += f * r * g_;
    beta_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>().rankUpdate(g_, -f);
  }
  alpha_(n) = f * r * hn;
  beta_.col(n).head(n) = -f * hn * g_;
  beta_(n, n) = -f * hn * hn;
  points_.add(px);
  ++rounds_;
  (void)initial;
  return yhat;
}

Eigen::MatrixXd KernelMinmaxLearner::beta() const {
  const auto n = static_cast<Eigen::Index>(points_.size());
  if (n == 0) return Eigen::MatrixXd();
  Eigen::MatrixXd b = beta_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>();
  return b;
}

// Version 1: one problem; 2: K problems over one embedding (share_points). Then the learner's name, -b, the
// budget, the kernel, b, c (0 until resolved), the scale they were resolved with, the rounds; then the
// embedding and the inner learners (--budget), or the points with alpha and beta.
template <class Self, class V>
void KernelMinmaxLearner::state(Self& self, V& v) {
  const std::string problems = "saved for another number of problems, or not a kernel min-max state";
  v.fixed("state version", self.problems_ > 1 ? kProblemsStateVersion : kStateVersion, problems);
  if (self.problems_ > 1) v.fixed("problems", self.problems_, problems);
  v.fixed("learner", std::string(self.name()), "the model is another learner's");
  v.fixed("bits", static_cast<uint32_t>(self.bits_), "saved with another -b");
  v.fixed("budget", self.opt_.budget, "saved with another --budget");
  v.part(
      "kernel", self.kernel_, [&self] { return common::KernelSetting(self.opt_.kernel); },
      [](std::ostream& out, const common::KernelSetting& k) { out << "kernel " << k.text() << "\n"; });
  const double b = v.number("b", self.b_, common::kNonNegative);
  const double c = v.number("c", self.c_, common::kNonNegative);
  v.number("scale", self.scale_, common::kNonNegative);
  const uint64_t rounds = v.whole("rounds", self.rounds_);
  v.check(b > 0.0 ? !self.opt_.rule->drift || b < c : rounds == 0, "b, c or the scale out of range");
  if (self.nystrom_) return embedded_state(self, v, b, c);
  const auto& points = common::points_part(v, self.points_);
  const uint64_t n = points.size(), cap = std::max<uint64_t>(n, 1);
  v.vector("alpha", self.alpha_, n, cap);
  v.upper("beta", self.beta_, n, cap);
  v.lines([&self](std::ostream& out) {
    for (size_t i = 0; i < self.points_.size(); ++i) {
      out << "point " << i << " alpha " << self.alpha_(static_cast<Eigen::Index>(i)) << " |";
      const kernels::PointRef p = self.points_[i];
      for (size_t k = 0; k < p.n; ++k) out << " " << p.data[k].slot << ":" << p.data[k].x;
      out << "\n";
    }
  });
}

// --budget: the embedding (it refers to kernel_, whose object keeps its address when a loaded setting is moved
// in), whether the inner learners are made (once b is known), and each problem's.
template <class Self, class V>
void KernelMinmaxLearner::embedded_state(Self& self, V& v, double b, double c) {
  v.part(
      "landmarks", self.nystrom_,
      [&self] {
        return std::make_unique<NystromEmbedding>(self.kernel_.kernel(), kLandmarkSampler, self.opt_.budget);
      },
      [](std::ostream& out, const NystromEmbedding& e) { out << "landmarks " << e.size() << "\n"; });
  const bool inner = v.value("inner", uint8_t{!self.inner_.empty()}, uint8_t{0}, uint8_t{1}) == 1;
  v.check(!inner || b > 0.0, "an inner learner before b is known");
  v.parts(
      "problem", self.inner_,
      [&self, inner, b, c] {
        return inner ? self.inner_learners(b, c) : std::vector<std::unique_ptr<MinmaxLearner>>();
      },
      [&self](std::ostream& out, size_t p, const MinmaxLearner& l) {
        if (self.inner_.size() > 1) out << "problem " << p << "\n";
        l.write_readable(out);
      });
}

void KernelMinmaxLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void KernelMinmaxLearner::load(ModelReader& in) { common::load_state(*this, in); }

uint64_t KernelMinmaxLearner::safeguard_count() const {
  uint64_t n = safeguards_;
  for (const auto& inner : inner_) n += inner->safeguard_count();
  return n;
}

std::vector<std::string> KernelMinmaxLearner::describe() const {
  const std::string n(name());
  std::vector<std::string> out{n + " kernel = " + kernel_.text()};
  const std::string rel =
      " x the largest K(x, x) of the first " + std::to_string(common::kKernelWarmup) + " examples";
  if (opt_.rule->drift) {
    out.push_back(n + " c = " + (opt_.c ? common::number(*opt_.c) : opt_.b ? "100 b" : "100" + rel));
    out.push_back(n + " b = " + (opt_.b ? common::number(*opt_.b) : opt_.c ? "0.01 c" : "0.1" + rel));
  } else {
    out.push_back(n + " b = " + (opt_.b ? common::number(*opt_.b) : "2" + rel));
  }
  out.push_back(n + " budget = " +
                (opt_.budget > 0 ? std::to_string(opt_.budget) + " landmarks (Nystrom embedding)"
                                 : std::string("none (exact: every example stored)")));
  return out;
}

std::vector<std::string> KernelMinmaxLearner::summary_lines() const {
  std::string line = std::string(name()) + " kernel = " + kernel_.text() + ", b = " + common::number(b_);
  if (opt_.rule->drift) line += ", c = " + common::number(c_);
  line += nystrom_ ? ", " + std::to_string(nystrom_->size()) + " landmarks (budget " +
                         std::to_string(opt_.budget) + ")"
                   : ", " + std::to_string(points_.size()) + " points stored";
  return {line};
}

void KernelMinmaxLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

std::vector<LearnerRow> kernel_minmax_rows() {
  using Kind = OptionSpec::Kind;
  const OptionSpec::Range positive{0.0, std::numeric_limits<double>::infinity(), true, false};
  std::vector<LearnerRow> rows;
  for (const char* name : {"kwemm", "klaser"}) {
    const bool drift = std::string(name) == "klaser";
    std::vector<OptionSpec> options = common::kernel_options();
    options.push_back(
        {"mm_b",
         "",
         Kind::kNumber,
         "",
         "b, the prior's weight on ||u||^2 (default: kwemm 2, klaser 0.1, times the largest K(x, x) "
         "of the first 256 examples, saved in the model; klaser: 0.01 c when --mm_c is given)",
         positive,
         {}});
    if (drift)
      options.push_back(
          {"mm_c",
           "",
           Kind::kNumber,
           "",
           "c, the penalty on drift of the best model: smaller tracks faster (default: 100 times the "
           "largest K(x, x) of the first 256 examples; 100 b when only --mm_b is given)",
           positive,
           {}});
    options.push_back(common::budget_option());
    LearnerRow row{
        name,
        drift ? "LASER (last-step min-max regression for drifting targets) in a kernel's feature space: "
                "non-linear drifting regression; every example stored unless --budget"
              : "weighted min-max regression (WEMM) in a kernel's feature space: non-linear regression "
                "with a regret bound and no learning rate; every example stored unless --budget",
        options, [drift](const LearnerContext& c) {
          return std::make_unique<KernelMinmaxLearner>(
              KernelMinmaxOptions::from(minmax_rule(drift ? "laser" : "wemm"), c.options), c.bits,
              c.random_seed);
        }};
    row.traits.losses = {"squared"};
    row.traits.passes = false;
    row.traits.passes_with = "budget";
    row.traits.state_grows = true;
    row.numerics_test_cap = 400;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lepus
