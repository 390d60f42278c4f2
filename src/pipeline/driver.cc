#include "pipeline/driver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include <tbb/global_control.h>

#include "formats/csv.h"
#include "formats/libsvm.h"
#include "formats/vw_text.h"
#include "io/block_reader.h"
#include "io/example_cache.h"
#include "lepus/errors.h"
#include "pipeline/metrics.h"
#include "pipeline/pass_runner.h"
#include "pipeline/sinks.h"
#include "pipeline/sources.h"

namespace lepus {

namespace {

// Collects one batch's parse warnings with the (block-relative) line they belong to.
class BatchWarnings final : public WarningSink {
 public:
  explicit BatchWarnings(Batch& b) : b_(b) {}
  void warn(const std::string& message) override { b_.warnings.emplace_back(b_.line_count, message); }

 private:
  Batch& b_;
};

using ParseLine = void (*)(std::string_view, const ParseOptions&, Example&, WarningSink&);

// Marks a batch "warning" that is an error whatever --strict_parse says (e.g. a line over --max_line_bytes).
constexpr char kFatalMark[] = "\x01";

void note_label(BestConstantInput& in, float y) {
  if (!in.have_l1) {
    in.have_l1 = true;
    in.l1 = y;
  } else if (y != in.l1) {
    if (!in.have_l2) {
      in.have_l2 = true;
      in.l2 = y;
    } else if (y != in.l2) {
      in.more_labels = true;
    }
  }
}

// A warning quotes the input; control bytes in it would garble a terminal, and a huge token would flood it.
// A warning's quote of the input, safe for a terminal: control characters become '?', and bytes that are not
// part of valid UTF-8 (or that encode a C1 control, U+0080-U+009F, which terminals obey) become \xNN, so a
// binary or Latin-1 file cannot drive the terminal; valid UTF-8 text (names in any script) is shown as it is.
std::string printable(const std::string& s) {
  std::string out;
  out.reserve(std::min<size_t>(s.size(), 300));
  auto cont = [&](size_t i) { return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  for (size_t i = 0; i < s.size();) {
    if (out.size() >= 300) {
      out += "...";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c < 0x20 && c != '\t') || c == 0x7F ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    // The length of a well-formed UTF-8 sequence led by c (RFC 3629 section 4: no overlong forms, <= U+10FFFF).
    size_t n = 0;
    if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 4;
    bool ok = n > 0 && (c != 0xC2 || i + 1 >= s.size() || static_cast<unsigned char>(s[i + 1]) >= 0xA0);
    for (size_t k = 1; ok && k < n; ++k) ok = cont(i + k);
    if (ok && n == 3) {
      const unsigned char d = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && d < 0xA0) && !(c == 0xED && d >= 0xA0);  // overlong, surrogates
    }
    if (ok && n == 4) {
      const unsigned char d = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xF0 && d < 0x90) && !(c == 0xF4 && d >= 0x90);
    }
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      static const char* const hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    }
  }
  return out;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  if (path.empty()) return ::fstat(0, &st) == 0 && S_ISREG(st.st_mode);
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

struct Driver::PassState {
  int pass = 1;
  bool holdout_mode = false;  // pass >= 2 with holdout on: the table shows holdout loss
  double holdout_loss = 0.0;  // this pass
  double holdout_weight = 0.0;
  uint64_t line_base = 0;   // lines of the text before the current batch (over all data files)
  size_t file = SIZE_MAX;   // the data file being read (SIZE_MAX: none yet, or a cache)
  uint64_t file_start = 0;  // line_base when that file began
};

Driver::Driver(const DriverOptions& options, Learner& learner, FeatureSpace& space, const Loss& loss,
               std::ostream* log)
    : opt_(options),
      learner_(learner),
      space_(space),
      loss_(loss),
      log_(log),
      table_(log, options.progress, options.progress_additive),
      logistic_(loss.name() == "logistic") {
  reduction_ = dynamic_cast<const Reduction*>(&learner_);
  if (opt_.data.empty()) names_.push_back(opt_.no_input ? "no input" : "stdin");
  for (const auto& d : opt_.data) {
    names_.push_back(d == "-" ? std::string("stdin") : d);
    if (!is_regular_file(d)) interactive_ = true;
  }
  if (opt_.data.empty() && !opt_.no_input) interactive_ = !is_regular_file("");
  // Every data file is opened once here, so a missing second file is an error before the first example.
  for (size_t i = 1; i < opt_.data.size(); ++i) InputSource::open(opt_.data[i]);
  if (!opt_.cache_file.empty()) {
    std::string why;
    // Without a data file the cache is the input, as in VW: any cache made with the same parse options.
    const bool no_data = opt_.data.empty();
    const std::string fingerprint =
        no_data ? std::string() : cache_fingerprint(opt_.data, opt_.parse_fingerprint);
    if (!opt_.kill_cache) {
      auto r = no_data ? CacheReader::open(opt_.cache_file, ";" + opt_.parse_fingerprint, &why, true)
                       : CacheReader::open(opt_.cache_file, fingerprint, &why);
      if (r) cache_in_ = std::make_unique<CacheSource>(std::move(r), opt_.block_size);
    }
    if (!cache_in_ && no_data && !opt_.kill_cache && why != "no cache file")
      throw IoError(opt_.cache_file + ": " + why +
                    "; with no data file the cache is the input, so lepus will not "
                    "rebuild it from " +
                    (opt_.no_input ? "no input" : "stdin") + ": give the data file, or -k to rebuild it");
    if (!cache_in_ && !(no_data && opt_.no_input)) {
      if (why != "no cache file" && !opt_.kill_cache) cache_rebuild_reason_ = why;
      cache_out_ = std::make_unique<CacheWriter>(
          opt_.cache_file, no_data ? cache_fingerprint(opt_.data, opt_.parse_fingerprint) : fingerprint,
          opt_.compressed_cache);
    }
  }
  if (!cache_in_) text_ = open_text();
  if (opt_.format == InputFormat::kCsv && text_) {  // the table's schema, from its first line
    header_ = static_cast<TextSource&>(*text_).first_line();
    opt_.parse.csv =
        make_csv_schema(opt_.csv.header_text.empty() ? header_ : opt_.csv.header_text, opt_.csv, opt_.parse);
  }
  if (opt_.metrics || opt_.keep_metrics) metrics_ = std::make_unique<Metrics>();
  if (opt_.audit.audit || opt_.audit.invert_hash || !opt_.audit.audit_regressor.empty())
    audit_ = std::make_unique<Auditor>(opt_.audit, learner_, log_);
  // Blocks of examples for a learner that asks (a mixture's members in parallel), when each example needs no
  // more than its prediction: not under audit (its figures wrap each learning step) nor with several ranks.
  blocks_ = audit_ || opt_.ranks ? nullptr : dynamic_cast<LearnsBlocks*>(&learner_);
  block_ = blocks_ ? blocks_->block_size() : 0;
  pending_work_.resize(block_);
  pred_out_ = std::make_unique<PredictionFile>(opt_.predictions);
  raw_out_ = std::make_unique<PredictionFile>(opt_.raw_predictions);
  if (!opt_.progress_log.empty()) progress_log_ = std::make_unique<ProgressLog>(opt_.progress_log);
}

Driver::~Driver() = default;

void Driver::save_model_now(const std::function<void()>& save_model) {
  // --distributed: rank 0 writes the model while the others wait for it in the next synchronisation; the time
  // writing takes (a large model on a slow disk) is not silence (--sync_timeout).
  if (opt_.ranks) opt_.ranks->busy();
  save_model();
}

int Driver::csv_records() const {
  return opt_.format == InputFormat::kCsv && opt_.csv.quoted ? static_cast<unsigned char>(opt_.csv.delimiter)
                                                             : -1;
}

std::unique_ptr<BlockSource> Driver::open_text() const {
  return std::make_unique<TextSource>(opt_.data, opt_.block_size, opt_.max_line_bytes, !opt_.strict_parse,
                                      opt_.no_input, csv_records());
}

Driver::Location Driver::locate(const PassState& ps, uint64_t stream_line) const {
  if (ps.file != SIZE_MAX) return {names_[ps.file], stream_line - ps.file_start};
  return {names_.size() == 1 ? names_[0] : opt_.cache_file, stream_line};
}

std::string Driver::cache_status() const {
  if (cache_in_) return "using cache_file = " + opt_.cache_file;
  if (cache_out_) {
    std::string s = "creating cache_file = " + opt_.cache_file;
    if (!cache_rebuild_reason_.empty()) s += " (rebuilt: " + cache_rebuild_reason_ + ")";
    return s;
  }
  return "using no cache";
}

void Driver::parse_batch(Batch& b, bool records) const {
  b.size = 0;
  b.line_count = 0;
  b.warnings.clear();
  BatchWarnings sink(b);
  const char* p = b.bytes.data();
  const char* const end = p + b.bytes.size();
  auto slot = [&]() -> Example& {
    if (b.size == b.examples.size()) b.examples.emplace_back();
    return b.examples[b.size];
  };
  if (records) {
    while (p < end) {
      Example& ex = slot();
      p = decode_cache_record(p, end, ex, opt_.cache_file);
      ++b.size;
    }
    return;
  }
  const ParseLine parse = opt_.format == InputFormat::kLibsvm ? &parse_libsvm_line
                          : opt_.format == InputFormat::kCsv  ? &parse_csv_line
                                                              : &parse_vw_line;
  // CSV whose quoted cells may hold line ends: a record ends at a '\n' outside quotes (a batch without '"'
  // has none inside quotes, and is split at every '\n' as any text).
  const int csv = csv_records();
  const bool records_span = csv >= 0 && std::memchr(p, '"', static_cast<size_t>(end - p)) != nullptr;
  while (p < end) {
    const char* nl = nullptr;
    if (records_span) {
      CsvScan scan;
      csv_scan(p, static_cast<size_t>(end - p), static_cast<char>(csv), scan, true);
      nl = scan.record_end > 0 ? p + scan.record_end - 1 : nullptr;
    } else {
      nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    }
    const char* line_end = nl ? nl : end;
    const char* const next = nl ? nl + 1 : end;
    // The lines of a record after its first (line numbers stay the file's); a warning names the first.
    const uint64_t more_lines = records_span ? count_newlines(p, static_cast<size_t>(line_end - p)) : 0;
    Example& ex = slot();
    ex.line = ++b.line_count;
    if (b.skip_first_line && b.line_count == 1) {  // a table's header row
      b.line_count += more_lines;
      p = next;
      continue;
    }
    if (static_cast<size_t>(line_end - p) >
        opt_.max_line_bytes) {  // an error, raised in order by the learn stage
      b.warnings.emplace_back(b.line_count, kFatalMark + std::string("line longer than ") +
                                                std::to_string(opt_.max_line_bytes) +
                                                " bytes; raise the limit with --max_line_bytes to read it");
      b.line_count += more_lines;
      p = next;
      continue;
    }
    parse(std::string_view(p, static_cast<size_t>(line_end - p)), opt_.parse, ex, sink);
    if (!ex.empty) {
      if (ex.labeled && !(ex.weight >= 0.0f))
        sink.warn("Example has an invalid importance weight " + std::to_string(ex.weight) +
                  "; it is predicted, not learned from");
      ++b.size;
    }
    b.line_count += more_lines;
    p = next;
  }
}

void Driver::consume_batch(Batch& b, RunStats& st, PassState& ps) {
  if (opt_.ranks) opt_.ranks->alive();  // --distributed: a rank learning is not stuck (--sync_timeout)
  ps.line_base += b.lines_before;
  size_t w = 0;
  if (b.line_count > 0 && b.file != ps.file) {  // text from the next data file
    ps.file = b.file;
    ps.file_start = ps.line_base;
  }
  // Parse warnings, in line order, before the example of their line (a line may also give no example).
  auto emit_warnings_through = [&](uint64_t rel_line) {
    for (; w < b.warnings.size() && b.warnings[w].first <= rel_line; ++w) {
      const uint64_t line = ps.line_base - ps.file_start + b.warnings[w].first;  // within its file
      const std::string& message = b.warnings[w].second;
      const std::string& source = names_[ps.file];
      if (message.rfind(kFatalMark, 0) == 0) throw ParseError(source, line, message.substr(1));
      if (opt_.strict_parse) throw ParseError(source, line, printable(message));
      ++warnings_;
      if (log_ && warnings_ <= opt_.warnings_shown) {
        *log_ << "[warning] " << source << ":" << line << ": " << printable(message) << "\n";
        if (warnings_ == opt_.warnings_shown) *log_ << "[warning] further warnings are counted, not shown\n";
      }
    }
  };
  for (size_t i = 0; i < b.size && !stop_; ++i) {
    Example& ex = b.examples[i];
    if (b.line_count > 0) {  // text: make the line number absolute
      emit_warnings_through(ex.line);
      ex.line += ps.line_base;
    }
    consume(ex, st, ps);
  }
  flush_block(st, ps);  // before the batch's examples go back to the pool
  if (!stop_) emit_warnings_through(b.line_count);
  ps.line_base += b.line_count;
  if (interactive_) {
    pred_out_->flush();
    raw_out_->flush();
  }
}

void Driver::consume(Example& ex, RunStats& st, PassState& ps) {
  if (seen_ >= opt_.max_examples || (audit_ && audit_->regressor_done())) {
    stop_ = true;
    return;
  }
  ++seen_;
  if (seen_ == opt_.growing_state_warning && log_)  // reached once: seen_ only grows
    *log_ << "[warning] " << seen_ << " examples read: " << opt_.growing_state_advice << "\n";
  const uint64_t c = ex.line;  // VW's per-pass line counter counts every line, empty ones too
  const bool holdout =
      st.holdout_on && (opt_.holdout_after > 0 ? c > opt_.holdout_after : c % opt_.holdout_period == 0);
  if (cache_out_) cache_out_->append(ex);
  if (ex.labeled && !label_warned_ && log_ && loss_.binary_labels() && ex.label != 1.0f &&
      ex.label != -1.0f) {
    const Location at = locate(ps, ex.line);
    *log_ << "[warning] " << at.source << ":" << at.line << ": label " << ex.label << " is not -1 or 1; the "
          << loss_.name() << " loss expects -1/1 labels (use --positive_label to map them). Warned once.\n";
    label_warned_ = true;
  }
  // Interactions are expanded here, in the serial stage, into one reused buffer: the batch keeps only linear
  // features, so memory stays flat however many features -q generates (rcv1 -q ff: ~3,000 per example). Without
  // interactions expansion adds at most the constant, so the batch's example (parsed afresh next time) is expanded
  // where it lies, saving a copy of every example.
  const bool in_place = !space_.adds_features();
  Example& work = in_place ? ex : work_;
  if (!in_place) work_ = ex;
  try {  // an example past --max_features, or past memory, is an error naming its line
    space_.expand(work);
  } catch (const FeatureLimitError& e) {
    const Location at = locate(ps, ex.line);
    throw ParseError(at.source, at.line, e.what());
  } catch (const std::bad_alloc&) {
    const Location at = locate(ps, ex.line);
    throw ParseError(at.source, at.line,
                     "out of memory expanding this example's interactions (" +
                         std::to_string(ex.features.size()) +
                         " features before them); lower --max_features or drop an interaction");
  }

  if (!warm_done_) {
    const uint64_t want = opt_.test_only ? 0 : warmup_wanted_by(learner_);
    if (want == 0) {
      warm_done_ = true;
    } else {
      warm_.push_back(Held{ex, work, holdout});
      if (warm_.size() >= want) flush_warmup(st, ps);
      return;
    }
  }
  if (block_ > 0) {  // held until the block is full or the batch ends (consume_batch)
    hold(ex, work, holdout);
    // A block of wide examples (interactions) ends sooner: each held copy keeps its capacity, so 256 rcv1 -q ff
    // examples (4,600 features) would pin 19 MB where 2^16 features pin 1 MB. Results do not depend on where
    // blocks end.
    if (pending_.size() >= block_ || pending_features_ >= kBlockFeatures) flush_block(st, ps);
    return;
  }
  finish(ex, work, holdout, st, ps);
  if (opt_.sync_every > 0 && opt_.ranks && ++since_sync_ >= opt_.sync_every) sync(st, ps, false);
}

bool Driver::shared_table() const { return opt_.ranks != nullptr && opt_.ranks->size() > 1; }

RankSums Driver::sync(const RunStats& st, const PassState& ps, bool ended) {
  since_sync_ = 0;
  const RankSums mine{ended ? 1.0 : 0.0,   stop_ ? 1.0 : 0.0,     static_cast<double>(st.examples),
                      st.weighted_labeled, st.weighted_unlabeled, st.sum_loss,
                      holdout_loss_total_, holdout_weight_total_, ps.holdout_loss,
                      ps.holdout_weight};
  const RankSums r = mine.summed(*opt_.ranks);
  learner_.merge(*opt_.ranks);
  const double weight_seen = r.weighted_labeled + r.weighted_unlabeled;
  if (shared_table() && table_.due(weight_seen) && opt_.audit.audit_regressor.empty()) {
    // The table's row over every rank's examples; its label, prediction and features are rank 0's last example.
    ProgressRow row = last_row_;
    row.example_counter = static_cast<uint64_t>(r.examples);
    row.example_weight = weight_seen;
    const LossSum progressive{r.sum_loss, r.weighted_labeled};
    table_.print(row, ps.holdout_mode ? LossSum{r.holdout_loss_total, r.holdout_weight_total} : progressive,
                 progressive, ps.holdout_mode);
  }
  return r;
}

void Driver::flush_warmup(RunStats& st, PassState& ps) {
  std::vector<Example> prefix;
  prefix.reserve(warm_.size());
  for (const Held& h : warm_) prefix.push_back(h.work);
  warm_up(learner_, prefix);
  warm_done_ = true;
  std::vector<Held> held;
  held.swap(warm_);
  for (Held& h : held) {
    finish(h.ex, h.work, h.holdout, st, ps);
  }
}

namespace {
std::string g_format(float v) {  // C++ streams' default (6 significant digits), as VW prints class scores
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}
}  // namespace

std::string Driver::class_name(uint32_t klass) const {
  const NamedLabels* names = opt_.parse.named.get();
  if (names && klass >= 1 && klass <= names->size()) return names->name(klass);
  return std::to_string(klass);
}

// VW's losses: oaa's 0/1 loss (and, with probabilities, the log loss of the true class's probability, reported
// apart); csoaa's cost of the predicted class above the smallest cost listed.
double Driver::class_loss(const Example& ex, const ClassOutcome& o, bool holdout) {
  if (!ex.labeled || ex.classes.empty()) return 0.0;
  if (ex.label_kind == LabelKind::kCostSensitive) {
    float chosen = FLT_MAX, least = FLT_MAX;
    for (const ClassCost& c : ex.classes) {
      if (c.klass == o.klass) chosen = c.cost;
      least = std::min(least, c.cost);
    }
    return (static_cast<double>(chosen) - least) * ex.weight;
  }
  const uint32_t label = ex.classes.front().klass;
  if (!o.probabilities.empty()) {
    const size_t k = o.probabilities.size();
    const size_t i = (o.first_class == 0 ? label : label - 1) % k;
    const double log_loss =
        o.probabilities[i] > 0.0f ? -std::log(o.probabilities[i]) * ex.weight : 999.0 * ex.weight;
    (holdout ? holdout_class_log_loss_ : class_log_loss_) += log_loss;
    class_probabilities_ = true;
  }
  return label != o.klass ? ex.weight : 0.0;
}

void Driver::write_classes(const Example& ex, const ClassOutcome& o, std::string& label_text,
                           std::string& prediction_text) {
  const size_t k = o.scores.size();
  auto number_of = [&](size_t i) { return static_cast<uint32_t>(i) + o.first_class; };
  if (pred_out_->active()) {
    if (!o.probabilities.empty()) {  // -p: every class with its probability
      std::string line;
      for (size_t i = 0; i < k; ++i)
        line += (i ? " " : "") + class_name(number_of(i)) + ":" + g_format(o.probabilities[i]);
      pred_out_->write_text(line, ex.tag);
    } else {
      pred_out_->write_text(class_name(o.klass), ex.tag);
    }
  }
  if (raw_out_->active()) {
    std::string
        raw;  // -r: VW's " 1:s1 2:s2 ..." (with 0-based classes, class 0's score first, as VW orders it)
    if (o.first_class == 0 && k > 0) {
      raw += " 0:" + g_format(o.scores[k - 1]);
      for (size_t i = 0; i + 1 < k; ++i) raw += " " + std::to_string(i + 1) + ":" + g_format(o.scores[i]);
    } else {
      for (size_t i = 0; i < k; ++i) raw += " " + std::to_string(number_of(i)) + ":" + g_format(o.scores[i]);
    }
    raw_out_->write_text(raw, ex.tag);
  }
  if (ex.label_kind == LabelKind::kCostSensitive) {
    label_text = ex.labeled ? "known" : "unknown";
  } else {
    label_text = ex.labeled && !ex.classes.empty() ? class_name(ex.classes.front().klass) : "unknown";
  }
  prediction_text = class_name(o.klass);
  if (!o.probabilities.empty()) {  // "8(64%)": the predicted class's probability, in percent
    const float p = o.probabilities[(o.klass - o.first_class) % k];
    char buf[32];
    std::snprintf(buf, sizeof buf, "(%2.0f%%)", 100.0 * p);
    prediction_text += buf;
  }
}

void Driver::hold(const Example& ex, const Example& work, bool holdout) {
  // With interactions the example was expanded into work_, which the next example reuses: the block keeps a
  // copy (pending_work_ was sized to a block at the start, so the pointers stay valid).
  const Example* w = &work;
  if (w == &work_) {
    pending_work_[pending_.size()] = work;
    w = &pending_work_[pending_.size()];
  }
  pending_.push_back(Pending{&ex, w, holdout});
  pending_features_ += w->features.size();
}

void Driver::flush_block(RunStats& st, PassState& ps) {
  if (pending_.empty()) return;
  block_items_.clear();
  for (const Pending& h : pending_) block_items_.push_back({h.work, !(opt_.test_only || h.holdout), {}});
  blocks_->learn_block(block_items_);
  for (size_t i = 0; i < pending_.size(); ++i)
    record(*pending_[i].ex, *pending_[i].work, pending_[i].holdout, block_items_[i].out, st, ps,
           block_items_[i].outcome);
  pending_.clear();
  pending_features_ = 0;
}

void Driver::finish(const Example& ex, const Example& work, bool holdout, RunStats& st, PassState& ps) {
  if (audit_) audit_->before(work, ps.pass == 1);
  const Prediction p = (opt_.test_only || holdout) ? learner_.predict(work) : learner_.learn(work);
  record(ex, work, holdout, p, st, ps);
}

void Driver::record(const Example& ex, const Example& work, bool holdout, Prediction p, RunStats& st,
                    PassState& ps, const ClassOutcome* outcome) {
  // -p and -r never hold NaN or infinity: a learner's non-finite output and a link that overflows (poisson's
  // exp) are replaced (NaN by 0, infinity by +-FLT_MAX) and counted in the summary.
  auto finite = [this](float v) { return finite_or_replaced(v, replaced_outputs_); };
  p.raw = finite(p.raw);
  p.value = finite(p.value);
  if (audit_) audit_->after(p.value, ex.tag);
  const float scored = p.scored ? finite(*p.scored) : p.value;  // the prediction the loss is reported at
  const float shown = shown_prediction(opt_.link, opt_.binary, p.value, replaced_outputs_);
  float l = 0.0f;
  if (ex.labeled) {
    l = loss_.loss(scored, ex.label, learner_.label_range()) * ex.weight;
    if (!std::isfinite(l)) {  // an extreme label (1e30, squared): counted at the float range's end, and said
      l = FLT_MAX;
      ++clamped_losses_;
    }
    if (opt_.binary) {
      if (ex.label == 1.0f || ex.label == -1.0f) {
        l = ex.label == shown ? 0.0f : ex.weight;
      } else if (!binary_warned_ && log_) {
        *log_ << "[warning] --binary expects labels -1 or 1 (as VW warns); label " << ex.label
              << " is scored by the loss, not as right or wrong. Warned once.\n";
        binary_warned_ = true;
      }
    }
  }
  std::string label_text, prediction_text;  // a reduction's table entries (classes, names, probabilities)
  // --metrics count the examples the summary's loss does: the holdout ones when passes hold some out.
  const bool measured = metrics_ && ex.labeled && holdout == st.holdout_on;
  if (const ClassOutcome* o = outcome ? outcome : reduction_ ? reduction_->class_outcome() : nullptr) {
    l = class_loss(ex, *o, holdout);
    write_classes(ex, *o, label_text, prediction_text);
    if (measured && !ex.classes.empty() && ex.label_kind != LabelKind::kCostSensitive)
      metrics_->add_class(ex.classes.front().klass == o->klass, ex.weight);
  } else {
    pred_out_->write(shown, ex.tag);
    raw_out_->write(p.raw, ex.tag);
    if (measured) {
      const float probability = logistic_ ? 1.0f / (1.0f + std::exp(-scored)) : NAN;
      metrics_->add(scored, probability, ex.label, ex.weight);
    }
  }

  if (holdout) {
    if (ex.labeled) {
      ps.holdout_loss += l;
      ps.holdout_weight += ex.weight;
      holdout_loss_total_ += l;
      holdout_weight_total_ += ex.weight;
    }
    return;
  }
  ++st.examples;
  st.total_features += work.num_reported;
  if (ex.labeled) {
    st.sum_loss += l;
    st.weighted_labeled += ex.weight;
    if (ex.label_kind == LabelKind::kScalar) {  // a class is no number: VW's label sum stays 0
      st.weighted_labels += static_cast<double>(ex.label) * ex.weight;  // with -t too, as VW
      note_label(st.labels, ex.label);
    }
  } else {
    st.weighted_unlabeled += ex.weight;
  }

  const double weight_seen = st.weighted_labeled + st.weighted_unlabeled;
  // --audit_regressor prints its own table instead; with several ranks the rows come at synchronisations (sync).
  const bool shared = shared_table() && table_.on();
  const bool table_row = !shared && table_.due(weight_seen) && opt_.audit.audit_regressor.empty();
  if (!table_row && !progress_log_ && !shared) return;
  ProgressRow row;  // this example's entries; the table and the log each fill in their own since-last
  row.example_counter = st.examples;
  row.example_weight = weight_seen;
  if (ex.labeled) row.label = ex.label;
  row.prediction = shown;
  if (!prediction_text.empty()) {
    row.label_text = label_text;
    row.prediction_text = prediction_text;
  }
  row.features = work.num_reported;
  if (ps.holdout_mode) {
    row.holdout = true;
    row.missing_text = "unknown";
  }
  if (shared) {
    last_row_ = std::move(row);
    return;
  }
  const LossSum now = reported_losses(st, ps.holdout_mode);
  if (table_row) table_.print(row, now, {st.sum_loss, st.weighted_labeled}, ps.holdout_mode);
  if (progress_log_) progress_log_->example(std::move(row), now);
}

LossSum Driver::reported_losses(const RunStats& st, bool holdout_mode) const {
  if (holdout_mode) return {holdout_loss_total_, holdout_weight_total_};
  return {st.sum_loss, st.weighted_labeled};
}

int Driver::thread_count() const {  // --threads, else the machine's
  return opt_.threads > 0 ? opt_.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// DriverOptions::learn_thread, and any run with interactions: expanding and learning an example then outweighs
// parsing it many times over (rcv1 -q ff: ~4,600 features from ~75), and the expansion is best written in the
// learner's own caches (expanded by the parse stage instead, a 74 KB example crossed between cores and rcv1 -q ff
// took 40% longer).
bool Driver::learns_apart() const { return opt_.learn_thread || space_.adds_features(); }

void Driver::run_pass(BlockSource& source, bool records, RunStats& st, PassState& ps) {
  const int threads = thread_count();
  // Batches in flight: one per parsing thread, one being learned and slack for in-order hand-over. With
  // interactions the learner thread is the bottleneck (rcv1 -q ff: learning a batch takes ~15 times parsing it),
  // so parsed batches would queue for it and only hold memory (~0.3 MB each there): one of slack is enough,
  // where plain runs keep 2 × threads + 2 (click logs -q ua -q sc, parsing-bound, are as fast with either).
  const size_t tokens = static_cast<size_t>(space_.adds_features() ? threads + 2 : 2 * threads + 2);
  const bool header = !records && opt_.format == InputFormat::kCsv && opt_.csv.header;
  // --distributed over one stream (no {rank} in the data names): this rank's share of the blocks.
  const bool striped = !records && opt_.ranks != nullptr && opt_.ranks->size() > 1 && opt_.stripe_blocks;
  const uint64_t ranks = opt_.ranks ? static_cast<uint64_t>(opt_.ranks->size()) : 1;
  const uint64_t rank = opt_.ranks ? static_cast<uint64_t>(opt_.ranks->rank()) : 0;
  uint64_t block_index = 0;
  auto read = [&](Batch& b) {
    b.lines_before = 0;
    bool more = source.next(b.bytes);
    // --distributed over one stream: rank r of N learns blocks r, r + N, ...; the others' lines still count, so
    // line numbers stay the file's.
    while (more && striped && block_index++ % ranks != rank) {
      b.lines_before += count_lines(b.bytes.data(), b.bytes.size());
      more = source.next(b.bytes);
    }
    if (!more || records) return more;
    const auto& text = static_cast<const TextSource&>(source);
    b.file = text.file();
    b.skip_first_line = header && text.starts_file();
    if (b.skip_first_line && text.file() > 0 && text.line_of(b.bytes) != header_)
      throw ParseError(
          names_[text.file()], 1,
          "this table's header differs from " + names_[0] + "'s; every data file must have the same columns");
    return true;
  };
  // The examples are learned on one thread of their own, fed in order (learns_apart()).
  run_pass_stages<Batch>(
      tokens, threads > 1 && learns_apart(), stop_, read, [&](Batch& b) { parse_batch(b, records); },
      [&](Batch& b) { consume_batch(b, st, ps); });
  if (!warm_.empty()) flush_warmup(st, ps);  // a stream shorter than the warm-up
}

RunStats Driver::run(const std::function<void()>& save_model, const std::function<void(int)>& after_pass) {
  const int threads = thread_count();
  // A learner on a thread of its own is one of the threads: oneTBB gets the others. An idle oneTBB worker spins
  // and yields before it sleeps, and the learn stage wakes it for every batch: with one worker too many, rcv1
  // -q ff on 2 cores took 40% more time than with none.
  // Likewise a gzip stream's inflate thread (io/gzip_reader.h): rcv1x200 gzip -1 0.56 s -> 0.54 s, 5% less CPU.
  int parsers = threads;
  if (threads > 1 && learns_apart()) --parsers;
  if (parsers > 1 && text_ && static_cast<const TextSource&>(*text_).inflates_alone()) --parsers;
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(parsers));
  RunStats st;
  st.holdout_on = (opt_.passes > 1 || opt_.holdout_after > 0) && !opt_.holdout_off && !opt_.test_only;
  if (opt_.audit.audit_regressor.empty()) table_.header();
  float best = FLT_MAX;
  int misses = 0;
  bool saved_best = false;
  for (int pass = 1; pass <= opt_.passes && !stop_; ++pass) {
    PassState ps;
    ps.pass = pass;
    ps.holdout_mode = st.holdout_on && pass >= 2;
    if (cache_in_) {
      static_cast<CacheSource&>(*cache_in_).rewind();
      run_pass(*cache_in_, true, st, ps);
    } else {
      if (!text_) text_ = open_text();
      run_pass(*text_, false, st, ps);
      // Lenient reading: what was read before damage was used; say what was lost.
      for (const auto& damage : static_cast<const TextSource&>(*text_).damages()) {
        ++warnings_;
        if (log_) *log_ << "[warning] " << damage << "\n";
      }
      text_.reset();
      if (cache_out_) {
        if (stop_) {
          cache_out_.reset();  // an interrupted pass leaves no cache behind
        } else {
          cache_out_->finish();
          cache_out_.reset();
          std::string why;
          auto r =
              CacheReader::open(opt_.cache_file, cache_fingerprint(opt_.data, opt_.parse_fingerprint), &why);
          if (!r) throw IoError(opt_.cache_file + ": cache just written cannot be read back: " + why);
          cache_in_ = std::make_unique<CacheSource>(std::move(r), opt_.block_size);
        }
      }
    }
    st.passes_used = pass;
    if (opt_.ranks) {
      // --distributed: a rank whose pass has ended joins the others' synchronisations until every pass has ended;
      // then every rank holds the combined model and this pass's holdout loss, and stops if any rank stops.
      RankSums r;
      do {
        r = sync(st, ps, true);
      } while (r.ended < opt_.ranks->size());
      ps.holdout_loss = r.holdout_loss;
      ps.holdout_weight = r.holdout_weight;
      if (r.stopping > 0.0) stop_ = true;
    }
    learner_.end_pass();
    if (after_pass) after_pass(pass);
    if (st.holdout_on) {
      const float loss =
          ps.holdout_weight > 0.0 ? static_cast<float>(ps.holdout_loss / ps.holdout_weight) : FLT_MAX / 2;
      if (loss < best) {
        best = loss;
        misses = 0;
        if (save_model) save_model_now(save_model);
        saved_best = true;
      } else if (++misses >= opt_.early_terminate) {
        break;
      }
    }
  }
  if (st.holdout_on && best < FLT_MAX / 2) st.best_holdout = best;
  if (save_model && (!st.holdout_on || !saved_best || !st.best_holdout)) save_model_now(save_model);
  pred_out_->flush();
  raw_out_->flush();
  if (audit_) {
    const std::string note = audit_->finish();
    if (log_) *log_ << note;
  }
  if (progress_log_) progress_log_->finish(reported_losses(st, st.holdout_on && st.passes_used >= 2));
  st.warnings = warnings_;
  if (opt_.ranks) sum_over_ranks(*opt_.ranks, st);  // --distributed: the summary covers every rank's examples
  st.labels.sum_weighted_labels = st.weighted_labels;
  st.labels.weighted_labeled = st.weighted_labeled;
  return st;
}

VwRunFigures Driver::vw_figures(const RunStats& st) const {
  VwRunFigures f;
  f.sum_loss = st.sum_loss;
  f.sum_loss_since_last_dump = st.sum_loss - table_.last().loss;  // VW's table state, kept as VW keeps it
  f.dump_interval = table_.next_row();
  f.weighted_labeled_examples = st.weighted_labeled;
  f.weighted_labels = st.weighted_labels;
  f.weighted_unlabeled_examples = st.weighted_unlabeled;
  f.example_number = st.examples;
  f.total_features = st.total_features;
  f.old_weighted_labeled_examples = table_.last().weight;
  f.current_pass = static_cast<uint64_t>(st.passes_used);
  return f;
}

std::string Driver::summary(const RunStats& st) const {
  SummaryFigures s;
  s.examples = st.examples;
  s.passes_used = st.passes_used;
  s.weighted_examples = st.weighted_labeled + st.weighted_unlabeled;
  s.weighted_labels = st.weighted_labels;
  if (st.holdout_on) {
    s.holdout = true;
    if (st.best_holdout) s.average_loss = *st.best_holdout;
  } else {
    s.average_loss = st.average_loss();
  }
  if (!reduction_) {  // a reduction's classes have no best constant
    s.best_constant = loss_.best_constant(st.labels, learner_.label_range());
  } else if (class_probabilities_) {  // VW's "average multiclass log loss"
    const double w = st.holdout_on ? holdout_weight_total_ : st.weighted_labeled;
    if (w > 0.0) s.class_log_loss = (st.holdout_on ? holdout_class_log_loss_ : class_log_loss_) / w;
  }
  s.total_features = st.total_features;
  std::string out = summary_text(s);
  if (st.warnings > 0) out += "malformed input warnings = " + std::to_string(st.warnings) + "\n";
  if (learner_.safeguard_count() > 0)
    out += "numeric safeguards applied = " + std::to_string(learner_.safeguard_count()) + "\n";
  if (space_.clamped_values() > 0)
    out +=
        "interaction values clamped to the float range = " + std::to_string(space_.clamped_values()) + "\n";
  if (replaced_outputs_ > 0)
    out += "non-finite predictions replaced = " + std::to_string(replaced_outputs_) + "\n";
  if (clamped_losses_ > 0)
    out +=
        "example losses past the float range, each counted as 3.4e38 = " + std::to_string(clamped_losses_) +
        "\n";
  for (const auto& line : learner_.summary_lines()) out += line + "\n";
  if (opt_.metrics) out += metrics_->summary_lines();
  return out;
}

std::string Driver::metrics_json() const { return metrics_ ? metrics_->json() : std::string(); }

}  // namespace lepus
