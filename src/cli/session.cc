#include "cli/session.h"

#include <bit>
#include <cmath>
#include <span>

#include "core/link.h"
#include "core/zeroed_table.h"
#include "formats/csv.h"
#include "formats/libsvm.h"
#include "formats/vw_text.h"
#include "io/model_file.h"
#include "lepus/errors.h"
#include "lepus/hashing.h"
#include "lepus/model_io.h"

namespace lepus::cli {

Built build(Config& c) {
  const LearnerRow* row = find_learner(c.learner);
  // Some update rules need VW's per-group sum of x^2 from the feature space (sgd's plain --invariant).
  c.space.invariant_norm =
      row->traits.needs_invariant_norm && row->traits.needs_invariant_norm(c.learner_options);
  // Interactions touch a small table all over: its pages are then cheaper to map as huge pages.
  set_dense_tables(!c.space.quadratic.empty() || !c.space.cubic.empty() || !c.space.interactions.empty());
  Built b;
  LearnerContext ctx{c.learner_options, *c.loss_object, c.bits, c.driver.test_only, c.random_seed};
  if (c.multiclass) {  // the reduction owns its base: one instance, or one per class (multiclass.h)
    ctx.problems = c.multiclass->classes;
    auto mc = std::make_unique<MulticlassLearner>(*c.multiclass, [&] { return row->make(ctx); });
    if (mc->shared())
      // VW's layout: classes at offsets in one table, each feature's K slots rounded up to a power of two
      // (VW's feature width, which VW makes a power of two)
      c.space.multiplier = std::bit_ceil(uint64_t{c.multiclass->classes});
    b.learner = std::move(mc);
  } else {
    b.learner = row->make(ctx);
  }
  b.space = std::make_unique<FeatureSpace>(c.space);
  if (c.model) {
    ModelReader r(c.model->state.data(), c.model->state.size(), c.initial_regressor);
    b.space->load(r);
    if (c.model->predict_only()) {
      load_for_prediction(*b.learner, r);
    } else {
      b.learner->load(r);
    }
    if (r.remaining() != 0)
      throw ModelFormatError(c.initial_regressor + ": damaged lepus model: trailing state");
  }
  return b;
}

namespace {

// A parse warning is this session's error: the caller sees the line it gave, not a count on stderr.
class ThrowingWarnings : public WarningSink {
 public:
  explicit ThrowingWarnings(uint64_t line) : line_(line) {}
  void warn(const std::string& message) override { throw ParseError("input", line_, message); }

 private:
  uint64_t line_;
};

Config parse_args(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"lepus"};
  for (const auto& a : args) argv.push_back(a.c_str());
  Config c = parse_command_line(static_cast<int>(argv.size()), argv.data());
  auto refuse = [](bool given, const std::string& what) {
    if (given)
      throw ConfigError(what +
                        " belongs to a run over data files (the lepus command); a session takes its examples "
                        "one call at a time");
  };
  refuse(c.show_help || c.show_version || c.list_learners, "--help, --version and --learner help");
  refuse(!c.driver.data.empty(), "a data file");
  refuse(!c.driver.predictions.empty(), "-p");
  refuse(!c.driver.raw_predictions.empty(), "-r");
  refuse(!c.final_regressor.empty(), "-f (use save)");
  refuse(c.driver.passes != 1, "--passes");
  refuse(!c.driver.cache_file.empty(), "--cache_file");
  refuse(!c.readable_model.empty() || !c.invert_hash.empty(), "--readable_model and --invert_hash");
  refuse(c.daemon, "--daemon");
  refuse(c.distributed, "--distributed");
  c.loss_object = make_loss(c.loss);
  return c;
}

}  // namespace

Session::Session(const std::vector<std::string>& args) : c_(parse_args(args)), b_(build(c_)) {
  header_pending_ = c_.driver.format == InputFormat::kCsv && c_.driver.csv.header;
  const std::string_view ns = c_.driver.parse.libsvm_namespace;
  const uint32_t seed = c_.driver.parse.hash_seed;
  libsvm_ns_hash_ = ns.empty() ? (seed == 0 ? 0u : murmur3_32(std::string_view(), seed))
                               : hash_feature(ns, seed, c_.driver.parse.hash_mode);
}

Session::~Session() = default;

std::string Session::learner_name() const { return std::string(b_.learner->name()); }
std::string Session::loss_name() const { return std::string(c_.loss_object->name()); }

// What the driver's learn stage does with one parsed example: expand its interactions, hand a learner that
// wants a warm-up its first example, then learn (or predict).
Prediction Session::step(Example& ex, bool learn) {
  const bool in_place = !b_.space->adds_features();
  Example& work = in_place ? ex : work_;
  if (!in_place) work_ = ex;
  try {
    b_.space->expand(work);
  } catch (const FeatureLimitError& e) {
    throw ParseError("input", ex.line, e.what());
  }
  learn = learn && !c_.driver.test_only;
  if (learn && !warm_done_) {
    if (warmup_wanted_by(*b_.learner) > 0) warm_up(*b_.learner, std::span<const Example>(&work, 1));
    warm_done_ = true;
  }
  ++examples_;
  Prediction p = learn ? b_.learner->learn(work) : b_.learner->predict(work);
  p.raw = finite_or_replaced(p.raw, replaced_);
  p.value = finite_or_replaced(p.value, replaced_);
  return p;
}

void Session::outcome(const Prediction& p, SessionResult& r) {
  r.shown = shown_prediction(c_.driver.link, c_.driver.binary, p.value, replaced_);
  r.value = p.scored ? finite_or_replaced(*p.scored, replaced_) : p.value;
  r.raw = p.raw;
  if (const ClassOutcome* o = class_outcome_of(*b_.learner)) {
    r.klass = o->klass;
    r.scores = o->scores;
    r.shown = static_cast<float>(o->klass);
  }
}

SessionResult Session::run(std::string_view line, bool learn) {
  SessionResult r;
  ++lines_;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.find('\n') != std::string_view::npos)
    throw ParseError("input", lines_, "one example per call: the text holds a line break");
  if (c_.driver.format == InputFormat::kCsv &&
      !c_.driver.parse.csv) {  // the table's schema, from its first line
    c_.driver.parse.csv = make_csv_schema(
        c_.driver.csv.header_text.empty() ? line : c_.driver.csv.header_text, c_.driver.csv, c_.driver.parse);
  }
  if (header_pending_) {
    header_pending_ = false;
    r.empty = true;
    return r;
  }
  ThrowingWarnings warnings(lines_);
  ex_.clear();
  switch (c_.driver.format) {
    case InputFormat::kLibsvm: parse_libsvm_line(line, c_.driver.parse, ex_, warnings); break;
    case InputFormat::kCsv: parse_csv_line(line, c_.driver.parse, ex_, warnings); break;
    case InputFormat::kVw: parse_vw_line(line, c_.driver.parse, ex_, warnings); break;
  }
  ex_.line = lines_;
  if (ex_.empty) {
    r.empty = true;
    return r;
  }
  if (ex_.labeled && !(ex_.weight >= 0.0f))
    throw ParseError("input", lines_,
                     "Example has an invalid importance weight " + std::to_string(ex_.weight));
  outcome(step(ex_, learn), r);
  return r;
}

SessionResult Session::learn(std::string_view line) { return run(line, true); }
SessionResult Session::predict(std::string_view line) { return run(line, false); }

// Columns below this have their hashed index cached (8 MiB at most).
constexpr int64_t kCachedColumns = int64_t{1} << 20;

// Row i as the libsvm reader reads "label 0:x0 3:x3 ...": column j is the feature named "j" in the libsvm
// namespace, value-0 entries dropped.
void Session::fill_row(const CsrRows& rows, size_t i, Example& ex) {
  ex.clear();
  ex.line = lines_ + i + 1;
  const ParseOptions& po = c_.driver.parse;
  const std::string_view ns = po.libsvm_namespace;
  const unsigned char group =
      ns.empty() ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(ns[0]);
  if (rows.labels) {
    const float y = rows.labels[i];
    if (!std::isfinite(y)) throw ParseError("row", i + 1, "the label is not a finite number");
    if (po.label_mode == LabelMode::kMulticlass) {
      const uint32_t k = c_.multiclass->classes;
      if (y != std::floor(y) || y < 0.0f || y > static_cast<float>(k))
        throw ParseError("row", i + 1,
                         "class label " + std::to_string(y) + " is not a class 1.." + std::to_string(k));
      ex.classes.push_back(ClassCost{static_cast<uint32_t>(y), 0.0f});
      ex.label_kind = LabelKind::kMulticlass;
    } else {
      ex.label = y;
    }
    ex.labeled = true;
  } else {
    ex.label_kind = label_kind_of(po.label_mode);
  }
  if (rows.weights) {
    ex.weight = rows.weights[i];
    if (!(ex.weight >= 0.0f) || !std::isfinite(ex.weight))
      throw ParseError("row", i + 1, "invalid importance weight " + std::to_string(ex.weight));
  }
  if (po.drop_group[group]) return;
  const int64_t begin = rows.indptr[i], end = rows.indptr[i + 1];
  if (end < begin) throw ParseError("row", i + 1, "indptr decreases");
  for (int64_t k = begin; k < end; ++k) {
    const int64_t j = rows.indices[k];
    const float v = rows.data[k];
    if (j < 0) throw ParseError("row", i + 1, "negative column index " + std::to_string(j));
    if (!std::isfinite(v))
      throw ParseError("row", i + 1, "column " + std::to_string(j) + " is not a finite number");
    if (v == 0.0f) continue;
    if (j >= kCachedColumns) {  // a very wide matrix: hashed each time rather than cached
      ex.features.push_back(Feature{hash_feature(std::to_string(j), libsvm_ns_hash_, po.hash_mode), v});
      continue;
    }
    if (static_cast<uint64_t>(j) >= column_index_.size()) {
      const size_t from = column_index_.size();
      column_index_.resize(static_cast<size_t>(j) + 1);
      for (size_t c = from; c < column_index_.size(); ++c)
        column_index_[c] = hash_feature(std::to_string(c), libsvm_ns_hash_, po.hash_mode);
    }
    ex.features.push_back(Feature{column_index_[static_cast<size_t>(j)], v});
  }
  if (!ex.features.empty())
    ex.groups.push_back(FeatureGroup{group, 0, static_cast<uint32_t>(ex.features.size())});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
}

void Session::run_csr(const CsrRows& rows, bool learn, float* shown, float* value, uint32_t* klass,
                      float* scores) {
  if (learn && !rows.labels && !c_.driver.test_only) throw ConfigError("learning needs labels");
  if (c_.multiclass && c_.multiclass->kind == MulticlassOptions::Kind::kCsoaa)
    throw ConfigError("--csoaa takes its cost-sensitive labels from VW text lines, not from a matrix");
  const uint32_t k = classes();
  SessionResult r;
  size_t i = 0;
  // A learner that looks at a prefix first (a kernel's bandwidth) sees the first rows, as the driver holds
  // them.
  if (learn && !c_.driver.test_only && !warm_done_ && warmup_wanted_by(*b_.learner) > 0 && rows.rows > 0) {
    const size_t want = std::min<size_t>(rows.rows, warmup_wanted_by(*b_.learner));
    std::vector<Example> prefix(want);
    for (size_t j = 0; j < want; ++j) {
      fill_row(rows, j, prefix[j]);
      b_.space->expand(prefix[j]);
    }
    warm_up(*b_.learner, prefix);
    warm_done_ = true;
    for (; i < want; ++i) {
      ++examples_;
      Prediction p = b_.learner->learn(prefix[i]);
      p.raw = finite_or_replaced(p.raw, replaced_);
      p.value = finite_or_replaced(p.value, replaced_);
      outcome(p, r);
      if (shown) shown[i] = r.shown;
      if (value) value[i] = r.value;
      if (klass) klass[i] = r.klass;
      if (scores && k > 0)
        for (uint32_t c = 0; c < k && c < r.scores.size(); ++c) scores[i * k + c] = r.scores[c];
    }
  }
  for (; i < rows.rows; ++i) {
    fill_row(rows, i, ex_);
    outcome(step(ex_, learn), r);
    if (shown) shown[i] = r.shown;
    if (value) value[i] = r.value;
    if (klass) klass[i] = r.klass;
    if (scores && k > 0)
      for (uint32_t c = 0; c < k && c < r.scores.size(); ++c) scores[i * k + c] = r.scores[c];
  }
  lines_ += rows.rows;
}

void Session::learn_csr(const CsrRows& rows, float* shown, float* value, uint32_t* klass, float* scores) {
  run_csr(rows, true, shown, value, klass, scores);
}
void Session::predict_csr(const CsrRows& rows, float* shown, float* value, uint32_t* klass, float* scores) {
  run_csr(rows, false, shown, value, klass, scores);
}

void Session::save(const std::string& path) const {
  save_model(path, c_.saved_options, *b_.space, *b_.learner, c_.predict_only_model);
}

}  // namespace lepus::cli
