#include "pipeline/driver.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "formats/libsvm.h"
#include "formats/vw_text.h"
#include "io/line_reader.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

using ParseLine = void (*)(std::string_view, const ParseOptions&, Example&, WarningSink&);

// Where parse warnings go: counted always, the first few printed with file:line, or an error when strict.
class DriverWarnings final : public WarningSink {
 public:
  DriverWarnings(std::ostream* log, bool strict, size_t shown) : log_(log), strict_(strict), shown_(shown) {}
  void at(const std::string& source, uint64_t line) {
    source_ = &source;
    line_ = line;
  }
  void warn(const std::string& message) override {
    if (strict_) throw ParseError(*source_, line_, message);
    ++count_;
    if (log_ && count_ <= shown_) {
      *log_ << "[warning] " << *source_ << ":" << line_ << ": " << message << "\n";
      if (count_ == shown_) *log_ << "[warning] further warnings are counted, not shown\n";
    }
  }
  uint64_t count() const { return count_; }

 private:
  std::ostream* log_;
  bool strict_;
  size_t shown_;
  const std::string* source_ = nullptr;
  uint64_t line_ = 0;
  uint64_t count_ = 0;
};

}  // namespace

// A -p / -r destination; "/dev/stdout" writes to our stdout stream (no truncation of a redirected file).
class PredictionFile {
 public:
  explicit PredictionFile(const std::string& path) {
    if (path.empty()) return;
    if (path == "/dev/stdout" || path == "-") {
      f_ = stdout;
    } else {
      f_ = std::fopen(path.c_str(), "w");
      if (!f_) throw IoError(path + ": cannot open for writing: " + std::strerror(errno));
      owned_ = true;
    }
    path_ = path;
  }
  ~PredictionFile() {
    if (owned_) std::fclose(f_);
  }
  void write(float v, const std::string& tag) {
    if (!f_) return;
    std::string s = format_prediction(v);
    if (!tag.empty()) {
      s += ' ';
      s += tag;
    }
    s += '\n';
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) throw IoError(path_ + ": write failed");
  }
  void finish() {
    if (f_ && std::fflush(f_) != 0) throw IoError(path_ + ": write failed");
  }

 private:
  std::FILE* f_ = nullptr;
  bool owned_ = false;
  std::string path_;
};

namespace {

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

}  // namespace

Driver::Driver(const DriverOptions& options, Learner& learner, FeatureSpace& space, const Loss& loss,
               std::ostream* log)
    : opt_(options),
      learner_(learner),
      space_(space),
      loss_(loss),
      log_(log),
      reader_(std::make_unique<LineReader>(InputSource::open(options.data))),
      pred_out_(std::make_unique<PredictionFile>(options.predictions)),
      raw_out_(std::make_unique<PredictionFile>(options.raw_predictions)) {}

Driver::~Driver() = default;

RunStats Driver::run() {
  LineReader& reader = *reader_;
  PredictionFile& pred_out = *pred_out_;
  PredictionFile& raw_out = *raw_out_;
  DriverWarnings warnings(log_, opt_.strict_parse, opt_.warnings_shown);
  const ParseLine parse = opt_.format == InputFormat::kLibsvm ? &parse_libsvm_line : &parse_vw_line;
  const std::string source = opt_.data.empty() ? std::string("stdin") : opt_.data;

  RunStats st;
  double next_row = opt_.progress_additive ? opt_.progress : 1.0;
  double last_loss = 0.0, last_weight = 0.0;
  bool binary_warned = false;
  bool label_warned = false;
  if (log_) *log_ << progress_header();

  Example ex;
  std::string_view line;
  while (st.examples < opt_.max_examples && reader.next(line)) {
    ex.line = reader.line_number();
    warnings.at(source, ex.line);
    parse(line, opt_.parse, ex, warnings);
    if (ex.empty) continue;
    if (ex.labeled && !(ex.weight >= 0.0f)) {
      warnings.warn("Example has an invalid importance weight " + std::to_string(ex.weight) +
                    "; it is predicted, not learned from");
    }
    if (ex.labeled && !label_warned && log_ && loss_.binary_labels() && ex.label != 1.0f && ex.label != -1.0f) {
      *log_ << "[warning] " << source << ":" << ex.line << ": label " << ex.label << " is not -1 or 1; the "
            << loss_.name() << " loss expects -1/1 labels (use --positive_label to map them). Warned once.\n";
      label_warned = true;
    }
    space_.expand(ex);

    const Prediction p = opt_.test_only ? learner_.predict(ex) : learner_.learn(ex);
    float shown = apply_link(opt_.link, p.value);
    if (opt_.binary) shown = p.value > 0.0f ? 1.0f : -1.0f;

    ++st.examples;
    st.total_features += ex.num_reported;
    if (ex.labeled) {
      float l = loss_.loss(p.value, ex.label, learner_.label_range()) * ex.weight;
      if (opt_.binary) {
        if (ex.label == 1.0f || ex.label == -1.0f) {
          l = ex.label == shown ? 0.0f : ex.weight;
        } else if (!binary_warned && log_) {
          *log_ << "[error] --binary needs labels -1 or 1; label " << ex.label << " keeps the loss\n";
          binary_warned = true;
        }
      }
      st.sum_loss += l;
      st.weighted_labeled += ex.weight;
      if (!opt_.test_only) st.weighted_labels += static_cast<double>(ex.label) * ex.weight;
      note_label(st.labels, ex.label);
    } else {
      st.weighted_unlabeled += ex.weight;
    }
    pred_out.write(shown, ex.tag);
    raw_out.write(p.raw, ex.tag);

    const double weight_seen = st.weighted_labeled + st.weighted_unlabeled;
    if (log_ && weight_seen >= next_row) {
      ProgressRow row;
      row.average_loss = st.average_loss();
      if (st.weighted_labeled - last_weight > 0.0)
        row.since_last = (st.sum_loss - last_loss) / (st.weighted_labeled - last_weight);
      row.example_counter = st.examples;
      row.example_weight = weight_seen;
      if (ex.labeled) row.label = ex.label;
      row.prediction = shown;
      row.features = ex.num_reported;
      *log_ << progress_row(row);
      last_loss = st.sum_loss;
      last_weight = st.weighted_labeled;
      next_row = opt_.progress_additive ? weight_seen + opt_.progress : weight_seen * opt_.progress;
    }
  }
  pred_out.finish();
  raw_out.finish();
  st.warnings = warnings.count();
  st.labels.sum_weighted_labels = st.weighted_labels;
  st.labels.weighted_labeled = st.weighted_labeled;
  return st;
}

std::string Driver::summary(const RunStats& st) const {
  SummaryFigures s;
  s.examples = st.examples;
  s.weighted_examples = st.weighted_labeled + st.weighted_unlabeled;
  s.weighted_labels = st.weighted_labels;
  s.average_loss = st.average_loss();
  s.best_constant = loss_.best_constant(st.labels, learner_.label_range());
  s.total_features = st.total_features;
  std::string out = summary_text(s);
  if (st.warnings > 0) out += "malformed input warnings = " + std::to_string(st.warnings) + "\n";
  if (learner_.safeguard_count() > 0)
    out += "numeric safeguards applied = " + std::to_string(learner_.safeguard_count()) + "\n";
  return out;
}

}  // namespace lepus
