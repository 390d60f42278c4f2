// mix: exponentially weighted mixtures of registry learners (see mix.h for the rules and their papers).
#include "learners/mix.h"

#include "core/held_once.h"
#include "core/splitmix.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>

#include <chrono>
#include <exception>
#include <functional>

#include <tbb/task_group.h>

#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

using common::number;
constexpr uint32_t kStateTagV1 = 0x3158494Du;  // "MIX1": without the mixture's own loss
constexpr uint32_t kStateTagV2 = 0x3258494Du;  // "MIX2": without retirements and the round count
constexpr uint32_t kStateTagV3 = 0x3358494Du;  // "MIX3": without the validation sample
constexpr uint32_t kStateTag = 0x3458494Du;    // "MIX4"
constexpr uint64_t kMaxMembers = 1024;         // a saved member count past this is damage
constexpr double kScoreCap = 50.0;             // VW's logistic range: ln σ(±s) stays finite
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLossCap = 1e250;  // one round's member loss
constexpr double kCumCap = 1e280;   // cumulative losses and AdaHedge's gap

double lse(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) m = std::max(m, x);
  if (!std::isfinite(m)) return m;
  double s = 0.0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// ln σ(z) and ln σ(−z), stable on both sides (ln σ(z) = −ln(1 + e^−z) for z ≥ 0, z − ln(1 + e^z) below), from
// one exp and one log1p: exp(−|z|) is the argument on either side.
MixLearner::LogSigmoids log_sigmoids(double z) {
  const double l = std::log1p(std::exp(-std::fabs(z)));
  return {z >= 0.0 ? -l : z - l, -z >= 0.0 ? -l : -z - l};
}

// A kept example as a model holds it: label, importance weight, initial score, the linear count, the groups and
// the features (what the members' predictions read).
void put_example(ModelWriter& out, const Example& x) {
  out.put_f32(x.label);
  out.put_f32(x.weight);
  out.put_f32(x.initial);
  out.put_u32(x.num_linear);
  out.put_u32(static_cast<uint32_t>(x.groups.size()));
  for (const FeatureGroup& g : x.groups) {
    out.put_u8(g.ns);
    out.put_u32(g.begin);
    out.put_u32(g.end);
  }
  out.put_u64(x.features.size());
  for (const Feature& f : x.features) {
    out.put_u64(f.index);
    out.put_f32(f.value);
  }
}

Example get_example(ModelReader& in, const std::function<ModelFormatError(const std::string&)>& bad) {
  Example x;
  x.labeled = true;
  x.label = in.get_f32("mix sample label");
  x.weight = in.get_f32("mix sample weight");
  x.initial = in.get_f32("mix sample initial score");
  if (!std::isfinite(x.label) || !std::isfinite(x.initial) || !(x.weight > 0.0f && x.weight < FLT_MAX))
    throw bad("bad sample label, weight or initial score");
  x.num_linear = in.get_u32("mix sample linear count");
  const uint32_t groups = in.get_u32("mix sample group count");
  if (groups > in.remaining() / 9) throw bad("sample group count does not fit the file");
  for (uint32_t i = 0; i < groups; ++i) {
    FeatureGroup g{in.get_u8("mix sample group"), in.get_u32("mix sample group"),
                   in.get_u32("mix sample group")};
    if (g.begin > g.end || g.end > x.num_linear) throw bad("sample group out of range");
    x.groups.push_back(g);
  }
  const uint64_t n = in.get_u64("mix sample feature count");
  if (n > in.remaining() / 12 || x.num_linear > n) throw bad("sample feature count does not fit the file");
  x.features.resize(n);
  for (Feature& f : x.features) {
    f.index = in.get_u64("mix sample feature");
    f.value = in.get_f32("mix sample feature");
    if (!std::isfinite(f.value)) throw bad("non-finite sample feature value");
  }
  return x;
}

// MIX4's sample (a count, then the examples) and its V_k (a flag, then one per member).
void load_validation(ModelReader& in, uint64_t members, std::vector<Example>& sample,
                     std::vector<double>& validation, const MixLearner::Refusal& bad) {
  const uint64_t kept = in.get_u64("mix sample size");
  if (kept > in.remaining() / 25) throw bad("sample size does not fit the file");
  for (uint64_t i = 0; i < kept; ++i) sample.push_back(get_example(in, bad));
  const uint8_t has = in.get_u8("mix validation flag");
  if (has > 1) throw bad("bad validation flag");
  for (uint64_t k = 0; has == 1 && k < members; ++k) {
    validation.push_back(in.get_f64("mix member validation loss"));
    if (!std::isfinite(validation.back())) throw bad("non-finite member validation loss");
  }
}

void normalise(std::vector<double>& lw) {
  const double m = lse(lw);
  for (double& v : lw) v -= m;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (ch != ' ') {
      cur += ch;
    }
  }
  return out;
}

OptionValues defaults_of(const LearnerRow& row) {
  OptionValues v;
  for (const auto& s : row.options)
    if (s.kind != OptionSpec::Kind::kFlag && !s.default_value.empty()) v.set(s.name, s.default_value, false);
  return v;
}

// A member named "learner[:option=value...]" (a flag as ":option"): its registry row's name.
std::string row_name(const std::string& member) { return member.substr(0, member.find(':')); }

// The member's options: its row's defaults, then the ones its name gives (ConfigError for an option the row
// does not have, or a value outside its range or choices).
OptionValues options_of(const LearnerRow& row, const std::string& member) {
  OptionValues v = defaults_of(row);
  size_t at = member.find(':');
  while (at != std::string::npos) {
    const size_t next = member.find(':', at + 1);
    const std::string item =
        member.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const auto spec =
        std::find_if(row.options.begin(), row.options.end(), [&](const auto& o) { return o.name == name; });
    if (spec == row.options.end())
      throw ConfigError("--mix: learner '" + row.name + "' has no option '" + name + "' (in '" + member +
                        "')");
    const bool flag = spec->kind == OptionSpec::Kind::kFlag;
    if (flag != (eq == std::string::npos))
      throw ConfigError("--mix: '" + item + "' in '" + member +
                        "': " + (flag ? "a flag takes no value" : "write option=value"));
    v.set(name, flag ? "1" : item.substr(eq + 1), true);
    at = next;
  }
  try {
    check_option_values(row.options, v);
  } catch (const ConfigError& e) {
    throw ConfigError("--mix member '" + member + "': " + e.what());
  }
  return v;
}

MixLearner::Rule rule_of(const Loss& loss) {
  if (loss.name() == "logistic") return MixLearner::Rule::kLog;
  if (loss.name() == "squared") return MixLearner::Rule::kSquare;
  return MixLearner::Rule::kHedge;
}

}  // namespace

MixLearner::MixLearner(const std::string& members, double share, const LearnerContext& c, bool default_list)
    : loss_(c.loss),
      bits_(c.bits),
      test_only_(c.test_only),
      seed_(c.random_seed),
      share_(share),
      rule_(rule_of(c.loss)),
      default_list_(default_list),
      clip_(c.loss.initial_range(), c.test_only) {
  if (!(share >= 0.0 && share < 1.0))
    throw ConfigError("--mix_share must be in [0, 1), got " + number(share));
  names_ = split(members);
  if (default_list)
    std::erase_if(names_, [&](const std::string& n) {
      const LearnerRow* row = find_learner(row_name(n));
      return row != nullptr && !row->in_default_mixture(std::string(c.loss.name()));
    });
  if (names_.empty()) throw ConfigError("--mix names no learner");
  member_options_.reserve(names_.size());
  for (const auto& n : names_) member_options_.push_back(member_options(n));
  for (size_t k = 0; k < names_.size(); ++k) members_.push_back(make_member(names_[k], member_options_[k]));
  const size_t n = names_.size();
  cum_loss_.assign(n, 0.0);
  lw_.assign(n, -std::log(static_cast<double>(n)));
  retired_.assign(n, std::string());
  scratch_.resize(n);
}

size_t MixLearner::active_count() const {
  return static_cast<size_t>(
      std::count_if(retired_.begin(), retired_.end(), [](const auto& r) { return r.empty(); }));
}

double MixLearner::best_active(const std::vector<double>& losses) const {
  double best = kInf;
  for (size_t k = 0; k < size(); ++k)
    if (active(k)) best = std::min(best, losses[k]);
  return best;
}

// A member that cannot go on (a typed capacity error from its learn(), e.g. a sketch's cap on distinct
// features) leaves the mixture: its weight becomes 0 for good and the others are renormalised. For the Bayes
// mixture this is conditioning on the remaining members, so the ln K bound against each of them still holds.
void MixLearner::retire(size_t k, const std::string& why) {
  retired_[k] = "at learning example " + std::to_string(rounds_) + ": " + why;
  lw_[k] = -kInf;
  normalise(lw_);
}

double MixLearner::eta() const {
  const double damp = 1.0 / std::max(1.0, c_max_);
  switch (rule_) {
    case Rule::kLog: return damp;
    case Rule::kSquare: {
      const LabelRange r = clip_.range();
      const double w = static_cast<double>(r.hi) - r.lo;
      if (!(w > 0.0) || !std::isfinite(w)) return 0.0;  // a single point: every member predicts it
      return damp * 2.0 / (w * w);
    }
    case Rule::kHedge: return gap_ > 0.0 ? std::log(static_cast<double>(size())) / gap_ : kInf;
  }
  return 0.0;
}

std::vector<double> MixLearner::log_weights() const {
  std::vector<double> lw;
  log_weights_into(lw);
  return lw;
}

void MixLearner::log_weights_into(std::vector<double>& lw) const {
  if (share_ > 0.0) {
    lw = lw_;
    return;
  }
  log_weights_from(cum_loss_, lw);
}

void MixLearner::log_weights_from(const std::vector<double>& losses, std::vector<double>& lw) const {
  const size_t n = size();
  lw.resize(n);
  const double e = eta();
  const double best = best_active(losses);
  if (std::isinf(e)) {  // AdaHedge before any mixability gap: uniform over the leaders
    for (size_t k = 0; k < n; ++k) lw[k] = active(k) && losses[k] == best ? 0.0 : -kInf;
  } else {
    for (size_t k = 0; k < n; ++k) lw[k] = active(k) ? -e * (losses[k] - best) : -kInf;
  }
  normalise(lw);
}

// The regret bound of the plain mixture (no Fixed Share) against its best member, as the summary prints it:
// log loss ln K / η_T (the Bayes mixture's loss is its mix loss), square loss ln K / η_T with
// η_T = 2 / (b − a)² on the current range (the mix-loss lemma for nonincreasing η: de Rooij et al. 2014,
// lemma 1; Vovk 2001), AdaHedge 2Δ_T (de Rooij et al. 2014, section 2: R ≤ Δ_T + ln K/η_T = Δ_T + Δ_{T−1};
// the average prediction's convex loss is at most the weighted average loss). +inf with Fixed Share, whose
// bound against one member grows with the rounds.
double MixLearner::regret_bound() const {
  if (share_ > 0.0) return kInf;
  const double ln_k = std::log(static_cast<double>(size()));
  if (rule_ == Rule::kHedge) return 2.0 * gap_;
  const double e = eta();
  return e > 0.0 ? ln_k / e : kInf;
}

void MixLearner::set_test_share(double alpha) {
  if (!(alpha >= 0.0 && alpha <= 1.0))
    throw ConfigError("--mix_test_share must be in [0, 1], got " + number(alpha));
  test_share_ = alpha;
}

void MixLearner::set_validation_size(uint64_t r) {
  validation_size_ = r;
  if (sample_.size() > r) sample_.resize(r);
}

OptionValues MixLearner::member_options(const std::string& n) const {
  const LearnerRow* row = find_learner(row_name(n));
  if (row == nullptr) throw ConfigError("--mix: unknown learner '" + row_name(n) + "'");
  if (row->name == "mix") throw ConfigError("--mix: a mixture cannot contain a mixture");
  if (!row->accepts_loss(std::string(loss_.name())))
    throw ConfigError("--mix: learner '" + n + "' does not accept the " + std::string(loss_.name()) +
                      " loss");
  // The mixture's traits are static: a member that cannot run several passes would need traits the mix row
  // does not declare. (A member's warm-up goes through the mixture: warmup_wanted.)
  if (!row->traits.passes) throw ConfigError("--mix: learner '" + n + "' cannot be a member");
  return options_of(*row, n);
}

std::unique_ptr<Learner> MixLearner::make_member(const std::string& name, const OptionValues& options) const {
  return find_learner(row_name(name))->make(LearnerContext{options, loss_, bits_, test_only_, seed_});
}

void MixLearner::set_prune(double tau) {
  if (!(tau >= 0.0) || std::isinf(tau))
    throw ConfigError("--mix_prune must be a number >= 0, got " + number(tau));
  prune_ = tau;
}

// The check after round rounds_'s loss update (every member's state is the one after learning that round): the
// members whose log-weight is below −τ are pruned, but for the one whose current model predicts the sample best.
void MixLearner::prune_behind() {
  if (active_count() < 2 || sample_.empty()) return;
  std::vector<double> lw;
  log_weights_into(lw);
  bool any = false;
  for (size_t k = 0; k < size(); ++k) any = any || (active(k) && lw[k] < -prune_);
  if (!any) return;
  const std::vector<double> v = validation_losses();
  const double best = best_active(v);
  for (size_t k = 0; k < size(); ++k) {
    if (!active(k) || !(lw[k] < -prune_) || !(v[k] > best) || active_count() < 2) continue;
    retire(k, "pruned: weight " + number(std::exp(lw[k])) + " below e^-" + number(prune_) +
                  ", loss on the sample " + number(v[k]) + " against the best member's " + number(best));
    // Its state is of no further use (weight 0 for good): a fresh member in its place gives the memory back,
    // and a saved model holds the fresh state.
    members_[k] = make_member(names_[k], member_options_[k]);
  }
}

// Algorithm R (Vitter 1985): the t-th example learned from (t = rounds_) is kept while the sample is not full,
// then replaces a uniformly drawn one with probability R/t. The draw hashes (seed, t), so a resumed run keeps what
// an uninterrupted one does. An example with a non-finite number is not kept (a model holds finite numbers).
void MixLearner::keep_sample(const Example& x) {
  if (validation_size_ == 0) return;
  size_t at = sample_.size();
  if (at >= validation_size_) {  // the draw is a hash, not a generator's state: it can come before the checks
    const uint64_t j = splitmix64_mix(splitmix64_mix(seed_) ^ rounds_) % rounds_;
    if (j >= validation_size_) return;
    at = static_cast<size_t>(j);
  }
  if (!std::isfinite(x.label) || !std::isfinite(x.initial)) return;
  for (const Feature& f : x.features)  // read only for the few examples kept (about R ln(T / R) of T)
    if (!std::isfinite(f.value)) return;
  if (at == sample_.size()) sample_.emplace_back();
  keep(x, sample_[at]);
}

void MixLearner::keep(const Example& x, Kept& k) const {
  const uint64_t mask = (uint64_t{1} << bits_) - 1;  // bits_ <= 32
  k.label = x.label;
  k.weight = x.weight;
  k.initial = x.initial;
  thread_local KeptFeatures f;  // scratch: held_once copies it only when no equal features are held
  f.num_linear = x.num_linear;
  f.groups = x.groups;
  const size_t n = x.features.size();
  f.entries.resize(n);
  for (size_t i = 0; i < n; ++i)
    f.entries[i] =
        KeptFeatures::Entry{static_cast<uint32_t>(x.features[i].index & mask), x.features[i].value};
  k.features = held_once(f);
}

bool MixLearner::KeptFeatures::operator==(const KeptFeatures& o) const {
  auto same_group = [](const FeatureGroup& a, const FeatureGroup& b) {
    return a.ns == b.ns && a.begin == b.begin && a.end == b.end;
  };
  auto same_entry = [](const Entry& a, const Entry& b) {
    return a.slot == b.slot && std::bit_cast<uint32_t>(a.value) == std::bit_cast<uint32_t>(b.value);
  };
  return num_linear == o.num_linear &&
         std::equal(groups.begin(), groups.end(), o.groups.begin(), o.groups.end(), same_group) &&
         std::equal(entries.begin(), entries.end(), o.entries.begin(), o.entries.end(), same_entry);
}

// The process's one copy of kept features equal to f (under --oaa/--csoaa the classes keep the same examples).
std::shared_ptr<const MixLearner::KeptFeatures> MixLearner::held_once(const KeptFeatures& f) {
  static HeldOnce<KeptFeatures> held;
  // The hash reads the counts and at most 32 entries spread over the example (equality reads them all).
  const size_t n = f.entries.size(), step = std::max<size_t>(1, n / 32);
  uint64_t h = splitmix64_mix(f.num_linear ^ (uint64_t{n} << 32));
  for (size_t i = 0; i < n; i += step)
    h = splitmix64_mix(h ^
                       ((uint64_t{f.entries[i].slot} << 32) | std::bit_cast<uint32_t>(f.entries[i].value)));
  return held.get(f, h);
}

std::vector<Example> MixLearner::sample() const {
  std::vector<Example> out(sample_.size());
  for (size_t i = 0; i < sample_.size(); ++i) expand(sample_[i], out[i]);
  return out;
}

void MixLearner::expand(const Kept& k, Example& x) {
  x.labeled = true;
  x.label = k.label;
  x.weight = k.weight;
  x.initial = k.initial;
  x.num_linear = k.features->num_linear;
  x.groups = k.features->groups;
  const std::vector<KeptFeatures::Entry>& entries = k.features->entries;
  x.features.resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) x.features[i] = Feature{entries[i].slot, entries[i].value};
}

std::vector<double> MixLearner::validation_losses() const {
  if (sample_.empty()) return validation_;
  std::vector<double> v(size(), 0.0);
  Example x;
  for (const Kept& kept : sample_) {
    expand(kept, x);
    for (size_t k = 0; k < size(); ++k) {
      if (!active(k)) continue;
      const Prediction p = members_[k]->predict(x);
      const double l = x.weight * member_loss_term(input(p.scored.value_or(p.value)), x);
      v[k] = std::clamp(v[k] + (std::fabs(l) <= kLossCap ? l : kLossCap), -kCumCap, kCumCap);
    }
  }
  return v;
}

std::vector<double> MixLearner::test_log_weights() const {
  return test_only_ ? batch_log_weights(validation_) : log_weights();
}

std::vector<double> MixLearner::batch_log_weights(const std::vector<double>& validation) const {
  std::vector<double> lw;
  if (validation.empty())
    log_weights_into(lw);
  else
    log_weights_from(validation, lw);
  if (test_share_ > 0.0) share_toward_uniform(lw, test_share_);
  return lw;
}

// One Fixed Share step (Herbster & Warmuth 1998): w_k <- (1 − α) w_k + α / K over the active members, in logs.
void MixLearner::share_toward_uniform(std::vector<double>& lw, double alpha) const {
  const double floor = std::log(alpha / static_cast<double>(active_count()));
  const double keep = alpha < 1.0 ? std::log1p(-alpha) : -kInf;
  for (size_t k = 0; k < size(); ++k) {
    if (!active(k)) continue;  // stays at weight 0
    const double a = keep + lw[k];
    const double hi = std::max(a, floor);
    lw[k] = hi + std::log1p(std::exp(std::min(a, floor) - hi));
  }
}

std::vector<double> MixLearner::weights() const {
  std::vector<double> w = log_weights();
  for (double& v : w) v = std::exp(v);
  return w;
}

double MixLearner::input(float s) const {
  double v = s;
  if (std::isnan(v)) v = 0.0;
  if (rule_ == Rule::kLog) return std::clamp(v, -kScoreCap, kScoreCap);
  if (rule_ == Rule::kSquare) {
    const LabelRange r = clip_.range();
    return std::clamp(v, static_cast<double>(r.lo), static_cast<double>(r.hi));
  }
  return std::clamp(v, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX));
}

double MixLearner::mix_log(const std::vector<LogSigmoids>& ls, const std::vector<double>& lw,
                           Buffers& buf) const {
  const size_t n = size();
  std::vector<double>& a = buf.a;
  std::vector<double>& b = buf.b;
  a.resize(n);
  b.resize(n);
  for (size_t k = 0; k < n; ++k) {  // ŝ = ln Σ w σ(s) − ln Σ w σ(−s)
    a[k] = lw[k] + ls[k].pos;
    b[k] = lw[k] + ls[k].neg;
  }
  return std::clamp(lse(a) - lse(b), -kScoreCap, kScoreCap);
}

double MixLearner::mix(const std::vector<double>& s, const std::vector<double>& lw, Buffers& buf) const {
  const size_t n = size();
  std::vector<double>& a = buf.a;
  std::vector<double>& b = buf.b;
  a.resize(n);
  b.resize(n);
  switch (rule_) {
    case Rule::kLog: {
      std::vector<LogSigmoids> ls(n);
      for (size_t k = 0; k < n; ++k) ls[k] = log_sigmoids(s[k]);
      return mix_log(ls, lw, buf);
    }
    case Rule::kSquare: {  // Vovk's substitution function at the ends of [lo, hi]
      const LabelRange r = clip_.range();
      const double lo = r.lo, hi = r.hi;
      const double e = eta();
      if (!(e > 0.0)) return lo;
      for (size_t k = 0; k < n; ++k) {
        a[k] = lw[k] - e * (lo - s[k]) * (lo - s[k]);
        b[k] = lw[k] - e * (hi - s[k]) * (hi - s[k]);
      }
      const double g_lo = -lse(a) / e, g_hi = -lse(b) / e;
      return std::clamp(0.5 * (lo + hi) + (g_lo - g_hi) / (2.0 * (hi - lo)), lo, hi);
    }
    case Rule::kHedge: {
      double y = 0.0;
      for (size_t k = 0; k < n; ++k)
        if (std::isfinite(lw[k])) y += std::exp(lw[k]) * s[k];
      return y;
    }
  }
  return 0.0;
}

double MixLearner::label_share(const Example& x) const {
  // The loss's class-1 share q of the label, read off the loss itself: ℓ(1) − ℓ(−1) = 1 − 2q.
  const double d = static_cast<double>(loss_.loss(1.0f, x.label, clip_.range())) -
                   static_cast<double>(loss_.loss(-1.0f, x.label, clip_.range()));
  double q = std::clamp((1.0 - d) / 2.0, 0.0, 1.0);
  if (std::fabs(q - 1.0) < 1e-5) q = 1.0;
  if (std::fabs(q) < 1e-5) q = 0.0;
  return q;
}

double MixLearner::log_loss_term(double q, const LogSigmoids& ls) {
  if (q == 1.0) return -ls.pos;
  if (q == 0.0) return -ls.neg;
  return -(q * ls.pos + (1.0 - q) * ls.neg);
}

double MixLearner::member_loss_term(double s, const Example& x) const {
  switch (rule_) {
    case Rule::kLog: return log_loss_term(label_share(x), log_sigmoids(s));
    case Rule::kSquare: return (x.label - s) * (x.label - s);
    case Rule::kHedge: return loss_.loss(static_cast<float>(s), x.label, clip_.range());
  }
  return 0.0;
}

Prediction MixLearner::predict(const Example& x) const {
  std::vector<Prediction> p(size());
  for (size_t k = 0; k < size(); ++k)
    if (active(k)) p[k] = members_[k]->predict(x);
  return predicted(p);
}

bool MixLearner::concurrent_predict() const {
  for (size_t k = 0; k < size(); ++k)
    if (active(k) && !predicts_concurrently(*members_[k])) return false;
  return true;
}

Prediction MixLearner::predicted(std::span<const Prediction> members) const {
  const size_t n = size();
  std::vector<double> v(n), r(n);
  bool scored = false;
  for (size_t k = 0; k < n; ++k) {
    if (!active(k)) continue;  // weight 0
    const Prediction& p = members[k];
    v[k] = input(p.value);
    r[k] = input(p.scored.value_or(p.value));
    scored = scored || p.scored.has_value();
  }
  const std::vector<double> lw = test_log_weights();
  Buffers buf;
  const double s = mix(v, lw, buf);
  Prediction out = clip_.of(common::to_float(s, safeguards_));
  if (scored) out.scored = clip_.clip(common::to_float(mix(r, lw, buf), safeguards_));
  return out;
}

// Each member's round is independent of the others' (the members never see the mixture); what they throw is
// handled afterwards in member order (mix_round). Running the rounds of one example in parallel was measured and
// not kept: its per-example cost outweighed the members' work; blocks of examples run them in parallel
// (learn_block).
Prediction MixLearner::learn(const Example& x) {
  const size_t n = size();
  errors_.assign(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    scratch_[k] = Prediction{};
    if (!active(k)) continue;
    try {
      scratch_[k] = members_[k]->learn(x);  // each member's one round
    } catch (...) {
      errors_[k] = std::current_exception();
    }
  }
  return mix_round(x);
}

// Each member runs through the block as a oneTBB task of its own, keeping its answers and
// the first error it throws; then the mixture's rounds follow in example order, each from the members' answers
// to its example, exactly as learn() and predict() one example at a time. A member stops at its error: the
// mixture's round of that example retires it (or ends the run), so it is not asked again either way.
void MixLearner::learn_block(std::span<BlockItem> items) {
  // A pruning check reads every member's state after its round: the block runs in segments ending at the check
  // rounds, so that the states are those of one example at a time (learn()).
  if (!prunes()) return run_segment(items);
  uint64_t r = rounds_;
  size_t start = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].learn || !common::teaches(*items[i].x) || test_only_) continue;
    if (check_round(++r)) {
      run_segment(items.subspan(start, i + 1 - start));
      start = i + 1;
    }
  }
  if (start < items.size()) run_segment(items.subspan(start));
}

void MixLearner::run_segment(std::span<BlockItem> items) {
  const size_t n = size(), m = items.size();
  block_out_.assign(n * m, Prediction{});
  block_errors_.assign(n, BlockError{m, nullptr});
  auto run_member = [&](size_t k) {
    if (!active(k)) return;
    Learner& member = *members_[k];
    for (size_t i = 0; i < m; ++i) {
      try {
        block_out_[k * m + i] = items[i].learn ? member.learn(*items[i].x) : member.predict(*items[i].x);
      } catch (...) {
        block_errors_[k] = BlockError{i, std::current_exception()};
        return;
      }
    }
  };
  // The member that took longest over the last block runs on this thread, started first; the others are offered
  // to the other threads (measured: rcv1_small x100, default members, 1.53-1.59 s against 1.83-1.89 s with a
  // parallel_for over the members, whose split left aioli, the slowest, to whichever thread came to it).
  std::vector<double> seconds(n, 0.0);
  auto timed = [&](size_t k) {
    const auto start = std::chrono::steady_clock::now();
    run_member(k);
    seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  tbb::task_group others;
  for (size_t k = 0; k < n; ++k)
    if (k != lead_) others.run([&timed, k] { timed(k); });
  timed(lead_);
  others.wait();
  lead_ = static_cast<size_t>(std::max_element(seconds.begin(), seconds.end()) - seconds.begin());
  for (size_t i = 0; i < m; ++i) {
    errors_.assign(n, nullptr);
    for (size_t k = 0; k < n; ++k) {
      const bool answered = active(k) && i < block_errors_[k].at;
      scratch_[k] = answered ? block_out_[k * m + i] : Prediction{};
      if (active(k) && i == block_errors_[k].at) errors_[k] = block_errors_[k].error;
    }
    if (items[i].learn) {
      items[i].out = mix_round(*items[i].x);
      continue;
    }
    for (size_t k = 0; k < n; ++k)
      if (errors_[k]) std::rethrow_exception(errors_[k]);  // predict() would have thrown it
    items[i].out = predicted(scratch_);
  }
}

// The mixture's round on x after its members' (scratch_: their answers; errors_: what they threw).
Prediction MixLearner::mix_round(const Example& x) {
  clip_.see(x);  // the range widens with the label before predicting, as every member's does
  const size_t n = size();
  bool any_scored = false;
  if (common::teaches(x) && !test_only_) {  // examples learned from (others change no state)
    ++rounds_;
    keep_sample(x);
    validation_.clear();  // a loaded model's V_k: stale once the members learn on
  }
  for (size_t k = 0; k < n; ++k) {
    if (errors_[k]) {
      try {
        std::rethrow_exception(errors_[k]);
      } catch (const ConfigError& e) {
        if (active_count() == 1) throw;  // the last member: nothing left to predict with
        retire(k, e.what());
        scratch_[k] = Prediction{};
        continue;
      }
    }
    any_scored = any_scored || scratch_[k].scored.has_value();
  }
  std::vector<double>& v = in_v_;
  std::vector<double>& r = in_r_;
  v.resize(n);
  r.resize(n);
  for (size_t k = 0; k < n; ++k) {
    v[k] = input(scratch_[k].value);
    r[k] = input(scratch_[k].scored.value_or(scratch_[k].value));
  }
  std::vector<double>& lw = lw_now_;
  log_weights_into(lw);
  // Without a scored member r is v: one mixture, and (log loss) one ln σ pair per member for it and the
  // losses.
  const bool log_rule = rule_ == Rule::kLog;
  if (log_rule) {
    ls_v_.resize(n);
    for (size_t k = 0; k < n; ++k) ls_v_[k] = log_sigmoids(v[k]);
    if (any_scored) {
      ls_r_.resize(n);
      for (size_t k = 0; k < n; ++k) ls_r_[k] = log_sigmoids(r[k]);
    }
  }
  const std::vector<LogSigmoids>& ls_r = any_scored ? ls_r_ : ls_v_;
  const double mixed_v = log_rule ? mix_log(ls_v_, lw, buf_) : mix(v, lw, buf_);
  const double mixed_r = !any_scored ? mixed_v : log_rule ? mix_log(ls_r, lw, buf_) : mix(r, lw, buf_);
  Prediction out = clip_.of(common::to_float(mixed_v, safeguards_));
  if (any_scored) out.scored = clip_.clip(common::to_float(mixed_r, safeguards_));
  if (!common::teaches(x) || test_only_) return out;

  const double c = x.weight;
  const double q = log_rule ? label_share(x) : 0.0;
  std::vector<double>& l = loss_now_;
  l.assign(n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    if (!active(k)) continue;  // its loss stays where it left
    l[k] = c * (log_rule ? log_loss_term(q, ls_r[k]) : member_loss_term(r[k], x));
    if (!(std::fabs(l[k]) <= kLossCap)) {  // an overflowing member loss (hostile values): capped, counted
      l[k] = std::isnan(l[k]) ? kLossCap : std::clamp(l[k], -kLossCap, kLossCap);
      ++safeguards_;
    }
  }
  if (rule_ == Rule::kHedge) {  // AdaHedge: the mixability gap of this round, at the weights just used
    const double e = eta();
    double h = 0.0, m = kInf;
    std::vector<double>& t = buf_.a;
    t.assign(n, 0.0);
    for (size_t k = 0; k < n; ++k) {
      const double w = std::exp(lw[k]);
      if (w > 0.0) h += w * l[k];
      if (std::isinf(e)) {
        if (w > 0.0) m = std::min(m, l[k]);
      } else {
        t[k] = lw[k] - e * l[k];
      }
    }
    if (!std::isinf(e)) m = -lse(t) / e;
    const double delta = h - m;
    if (std::isfinite(delta) && delta > 0.0) gap_ = std::min(gap_ + delta, kCumCap);
  }
  c_max_ = std::max(c_max_, c);
  if (!std::isnan(own_loss_)) {
    const double own =
        c * (log_rule ? log_loss_term(q, log_sigmoids(mixed_r)) : member_loss_term(mixed_r, x));
    own_loss_ = std::clamp(own_loss_ + (std::fabs(own) <= kLossCap ? own : kLossCap), -kCumCap, kCumCap);
  }
  for (size_t k = 0; k < n; ++k) cum_loss_[k] = std::clamp(cum_loss_[k] + l[k], -kCumCap, kCumCap);
  if (share_ > 0.0) {  // Fixed Share (Herbster & Warmuth 1998): loss update, normalise, mix with uniform
    const double e = eta();
    if (std::isinf(e)) {
      const double best = best_active_loss();
      for (size_t k = 0; k < n; ++k) lw_[k] = active(k) && cum_loss_[k] == best ? 0.0 : -kInf;
    } else {
      for (size_t k = 0; k < n; ++k) lw_[k] -= e * l[k];
    }
    normalise(lw_);
    share_toward_uniform(lw_, share_);
    normalise(lw_);
  }
  if (prunes() && check_round(rounds_)) prune_behind();
  return out;
}

uint64_t MixLearner::warmup_wanted() const {
  uint64_t most = 0;
  for (size_t k = 0; k < size(); ++k)
    if (active(k)) most = std::max(most, warmup_wanted_by(*members_[k]));
  return most;
}

void MixLearner::warmup(std::span<const Example> prefix) {
  for (size_t k = 0; k < size(); ++k) {
    const uint64_t want = active(k) ? warmup_wanted_by(*members_[k]) : 0;
    if (want > 0) warm_up(*members_[k], prefix.first(std::min<size_t>(prefix.size(), want)));
  }
}

void MixLearner::end_pass() {
  for (size_t k = 0; k < size(); ++k)
    if (active(k)) members_[k]->end_pass();
}

uint64_t MixLearner::safeguard_count() const {
  uint64_t s = safeguards_;
  for (const auto& m : members_) s += m->safeguard_count();
  return s;
}

std::vector<std::string> MixLearner::describe() const {
  std::string list;
  for (const auto& n : names_) list += (list.empty() ? "" : ",") + n;
  const char* rule = rule_ == Rule::kLog      ? "bayes (log loss, eta 1)"
                     : rule_ == Rule::kSquare ? "aggregating algorithm (square loss)"
                                              : "adahedge";
  std::vector<std::string> out{"mix = " + list,
                               std::string("mix rule = ") + rule,
                               "mix_share = " + number(share_),
                               "mix_test_share = " + number(test_share_),
                               "mix_validation = " + std::to_string(validation_size_),
                               "mix_prune = " + number(prune_)};
  for (size_t k = 0; k < size(); ++k)
    for (const auto& line : members_[k]->describe()) out.push_back(names_[k] + ": " + line);
  return out;
}

std::vector<std::string> MixLearner::summary_lines() const {
  std::vector<std::string> out;
  const std::vector<double> w = weights();
  const std::vector<double> v = validation_losses();
  const std::vector<double> bw = batch_log_weights(v);
  for (size_t k = 0; k < size(); ++k)
    out.push_back("mix member " + names_[k] + ": " + (active(k) ? "" : "retired " + retired_[k] + "; ") +
                  "weight = " + number(w[k]) + ", loss = " + number(cum_loss_[k]) +
                  (v.empty() ? "" : ", validation loss = " + number(v[k])) +
                  ", test weight = " + number(std::exp(bw[k])));
  if (std::isnan(own_loss_)) return out;  // resumed from a model that did not keep it
  const double best = best_active_loss();
  std::string line = "mix regret against its best member = " + number(own_loss_ - best);
  const double b = regret_bound();
  if (std::isfinite(b)) line += " (bound " + number(b) + ")";
  out.push_back(line);
  return out;
}

// MIX4 (MIX3 lacks the validation sample; MIX2 also the retirements and the round count; MIX1 also the
// mixture's own loss): K, c_max, Δ, the own loss (+inf: not kept), the round count, per member a retired flag,
// then each retired member's reason, the label range, per member L_k and its log-weight (-1e300: -inf), the
// sample and V_k, then per member its name and, unless retired, its own state (its predict-only state in a
// predict-only model). A default list takes the model's own members; a list the user named must match.
template <class Self, class V>
void MixLearner::state(Self& self, V& v, bool predict_only) {
  const size_t older = v.version({kStateTag, kStateTagV3, kStateTagV2, kStateTagV1});
  const uint64_t n = v.count("members", self.size(), kMaxMembers);
  v.check(n >= 1, "bad member count 0");
  v.check(n == self.size() || self.default_list_,
          "has " + std::to_string(n) + " members, this run's --mix " + std::to_string(self.size()));
  v.lines([&self](std::ostream& out) {
    out << "mix_members " << self.size() << "\nmix_share " << self.share_ << "\n";
  });
  v.number("mix_c_max", self.c_max_, common::kNonNegative);
  v.number("mix_gap", self.gap_, common::kNonNegative);
  if (older <= 2) {
    const double own = v.value("own_loss", std::isnan(self.own_loss_) ? kInf : self.own_loss_, -kInf, kInf);
    v.check(std::isfinite(own) || own > 0.0, "non-finite mixture loss");
    v.derived(self.own_loss_, std::isfinite(own) ? own : kNaN);
  } else {
    v.absent(self.own_loss_, kNaN);
  }
  const std::vector<std::string> retired = retired_state(self, v, older, n);
  v.clip(self.clip_);
  std::vector<double> cum(n), lw(n);
  for (size_t k = 0; k < n; ++k) {
    const bool held = k < self.size();
    cum[k] = v.value("loss", held ? self.cum_loss_[k] : 0.0, -DBL_MAX, DBL_MAX);
    const double w = held && std::isfinite(self.lw_[k]) ? self.lw_[k] : -1e300;
    lw[k] = v.value("log_weight", w, -DBL_MAX, 1e-9);
    if (lw[k] <= -1e300 || !retired[k].empty()) lw[k] = -kInf;
  }
  v.derived(self.cum_loss_, cum);
  v.derived(self.lw_, lw);
  if (older == 0) {
    v.custom([&self, predict_only](ModelWriter& out) { self.save_sample(out, predict_only); },
             [&self, n](auto& in, auto bad) { return self.load_sample(in, n, bad); }, [](std::ostream&) {});
  } else {
    v.absent(self.sample_, std::vector<Kept>{});
    v.absent(self.validation_, std::vector<double>{});
  }
  v.custom([&self, predict_only](ModelWriter& out) { self.save_members(out, predict_only); },
           [&self, n, &retired, predict_only](auto& in, auto bad) {
             return self.load_members(in, n, retired, predict_only, bad);
           },
           [&self](std::ostream& out) { self.write_members(out); });
}

// MIX3's round count, retired flags and reasons (earlier versions: none retired): the reasons read.
template <class Self, class V>
std::vector<std::string> MixLearner::retired_state(Self& self, V& v, size_t older, uint64_t n) {
  std::vector<std::string> retired(n);
  if (older > 1) {
    v.absent(self.rounds_, uint64_t{0});
    v.derived(self.retired_, retired);
    return retired;
  }
  v.whole("rounds", self.rounds_);
  std::vector<uint8_t> flags(n);
  for (size_t k = 0; k < n; ++k)
    flags[k] = v.value("retired", uint8_t{k < self.size() && !self.active(k)}, uint8_t{0}, uint8_t{1});
  for (size_t k = 0; k < n; ++k) {
    if (!flags[k]) continue;
    retired[k] = v.value("retirement", k < self.size() ? self.retired_[k] : std::string());
    v.check(!retired[k].empty(), "empty retirement reason");
  }
  v.check(std::find(flags.begin(), flags.end(), uint8_t{0}) != flags.end(), "every member retired");
  v.derived(self.retired_, retired);
  return retired;
}

void MixLearner::save_sample(ModelWriter& out, bool predict_only) const {
  out.put_u64(predict_only ? 0 : sample_.size());
  Example x;
  for (size_t i = 0; !predict_only && i < sample_.size(); ++i) {
    expand(sample_[i], x);
    put_example(out, x);
  }
  const std::vector<double> v = validation_losses();
  out.put_u8(v.empty() ? 0 : 1);
  for (double l : v) out.put_f64(l);
}

std::function<void()> MixLearner::load_sample(ModelReader& in, uint64_t n, const Refusal& bad) {
  std::vector<Example> sample;
  std::vector<double> validation;
  load_validation(in, n, sample, validation, bad);
  if (sample.size() > validation_size_) sample.resize(validation_size_);
  auto kept = std::make_shared<std::vector<Kept>>(sample.size());
  for (size_t i = 0; i < sample.size(); ++i) keep(sample[i], (*kept)[i]);
  return [this, kept, validation] {
    sample_ = std::move(*kept);
    validation_ = validation;
  };
}

void MixLearner::save_members(ModelWriter& out, bool predict_only) const {
  for (size_t k = 0; k < size(); ++k) {
    out.put_string(names_[k]);
    if (!active(k)) continue;
    if (predict_only)
      save_for_prediction(*members_[k], out);
    else
      members_[k]->save(out);
  }
}

// Fresh members (a refused state leaves this learner as it was), each loaded unless retired (a fresh member
// stands in; it is never asked again).
std::function<void()> MixLearner::load_members(ModelReader& in, uint64_t n,
                                               const std::vector<std::string>& retired, bool predict_only,
                                               const Refusal& bad) {
  struct Read {
    std::vector<std::unique_ptr<Learner>> members;
    std::vector<std::string> names;
    std::vector<OptionValues> options;
  };
  auto read = std::make_shared<Read>();
  read->options.reserve(n);  // the members keep references to their options: no reallocation
  for (size_t k = 0; k < n; ++k) {
    const std::string got = in.get_string("mix member name");
    const bool same = k < size() && got == names_[k];
    if (!same && !default_list_)
      throw bad("member " + std::to_string(k) + " is '" + got + "', expected '" + names_[k] + "'");
    try {
      read->options.push_back(same ? member_options_[k] : member_options(got));
    } catch (const ConfigError& e) {
      throw bad(std::string(e.what()) + " (keep the model's --loss_function)");
    }
    read->names.push_back(got);
    read->members.push_back(make_member(got, read->options.back()));
    if (!retired[k].empty()) continue;
    if (predict_only)
      load_for_prediction(*read->members.back(), in);
    else
      read->members.back()->load(in);
  }
  return [this, read, n] {
    members_ = std::move(read->members);  // before the options the old members refer to go
    names_ = std::move(read->names);
    member_options_ = std::move(read->options);
    scratch_.resize(n);
    lead_ = 0;
  };
}

void MixLearner::write_members(std::ostream& out) const {
  const std::vector<double> w = weights();
  const std::vector<double> v = validation_losses();
  out << "mix_validation_sample " << sample_.size() << "\n";
  for (size_t k = 0; k < size(); ++k) {
    out << "mix_member " << k << " " << names_[k] << " weight " << w[k] << " loss " << cum_loss_[k];
    if (!v.empty()) out << " validation_loss " << v[k];
    out << (active(k) ? "" : " retired") << "\n";
  }
  for (size_t k = 0; k < size(); ++k) {
    if (!active(k)) continue;
    out << "mix_member_model " << k << " " << names_[k] << "\n";
    members_[k]->write_readable(out);
  }
}

void MixLearner::write_readable(std::ostream& out) const { common::write_state(*this, out, false); }
void MixLearner::save(ModelWriter& out) const { common::save_state(*this, out, false); }
void MixLearner::load(ModelReader& in) { common::load_state(*this, in, false); }
void MixLearner::save_predict_only(ModelWriter& out) const { common::save_state(*this, out, true); }
void MixLearner::load_predict_only(ModelReader& in) { common::load_state(*this, in, true); }

LearnerRow mix_row() {
  using Kind = OptionSpec::Kind;
  LearnerTraits traits;
  traits.passes = true;
  // The feature space computes VW's per-group sum of x^2 when any member would ask for it.
  traits.needs_invariant_norm = [](const OptionValues& o) {
    const std::string list = o.has("mix") ? o.text("mix") : MixLearner::kDefaultMembers;
    for (const auto& n : split(list)) {
      const LearnerRow* row = find_learner(row_name(n));
      if (row != nullptr && row->name != "mix" && row->traits.needs_invariant_norm &&
          row->traits.needs_invariant_norm(options_of(*row, n)))
        return true;
    }
    return false;
  };
  return LearnerRow{
      "mix",
      "the default: several learners side by side, predicting with their exponentially weighted mixture, "
      "close to the best of them on every stream (within ln K in log loss), for when you do not know which "
      "learner suits the data",
      {
          {"mix",
           "",
           Kind::kText,
           MixLearner::kDefaultMembers,
           "the learners --learner mix runs, comma-separated, each with its own defaults unless options "
           "follow "
           "its name (aioli:matrix=diag, a flag as :name); by default those of this list that accept the "
           "loss (aioli joins for the logistic loss only), and under --oaa / --csoaa sgd, scinol2 and aioli",
           {},
           {}},
          {"mix_test_share",
           "",
           Kind::kNumber,
           "0.1",
           "online to batch: a -t run predicts with the weights (1 - a) w + a/K, hedging the saved weights "
           "toward uniform against a test set unlike the training stream (0: the saved weights)",
           {0.0, 1.0, false, false}},
          {"mix_validation",
           "",
           Kind::kNumber,
           "256",
           "online to batch: the mixture keeps a uniform sample of this many training examples, and a saved "
           "model weighs its members by how their final models predict it (0: by their online losses, which "
           "favour the member best at the end of the stream)",
           {0.0, 1e6, false, false}},
          {"mix_prune",
           "",
           Kind::kNumber,
           "40",
           "a member whose weight in the mixture falls below e^-N, and whose model also predicts the sample "
           "(--mix_validation) worse than the best member's, stops learning: the mixture then costs what the "
           "members kept cost (checked after 1024, 2048, 4096, ... examples; 0: never)",
           {0.0, 1e6, false, false}},
          {"mix_share",
           "",
           Kind::kNumber,
           "0",
           "Fixed Share rate: each round mixes this much of the uniform weights back in, to follow drift",
           {0.0, 1.0, false, true},
           {}},
      },
      [](const LearnerContext& c) {
        const bool given = c.options.given("mix");
        const std::string members = given            ? c.options.text("mix")
                                    : c.problems > 1 ? MixLearner::kClassMembers
                                                     : MixLearner::kDefaultMembers;
        const double share = c.options.has("mix_share") ? c.options.number("mix_share") : 0.0;
        auto mix = std::make_unique<MixLearner>(members, share, c, !given);
        mix->set_test_share(c.options.has("mix_test_share") ? c.options.number("mix_test_share") : 0.1);
        const double r = c.options.has("mix_validation") ? c.options.number("mix_validation") : 256.0;
        if (r != std::floor(r))
          throw ConfigError("--mix_validation must be a whole number, got " + number(r));
        mix->set_validation_size(static_cast<uint64_t>(r));
        mix->set_prune(c.options.has("mix_prune") ? c.options.number("mix_prune") : 40.0);
        return mix;
      },
      std::move(traits)};
}

}  // namespace lepus
