// One model driven an example at a time, from a program instead of a data stream (the Python module): the
// CLI's options (parse_command_line), the same learner registry, parsers, feature space, link and model
// files. A line is parsed by the --format parser, expanded by the feature space and handed to Learner::learn
// or predict, as the driver's learn stage does; a CSR block of rows becomes examples whose column j is the
// libsvm feature "j".
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config.h"
#include "core/feature_space.h"
#include "lepus/example.h"
#include "lepus/learner.h"

namespace lepus::cli {

// The learner and the feature space a configuration describes, the -i model's state loaded into both (main's
// run and Session build them alike).
struct Built {
  std::unique_ptr<Learner> learner;
  std::unique_ptr<FeatureSpace> space;
};
Built build(Config& c);

// One example's outcome. `shown` is what -p writes (the link and --binary applied); `value` is the learner's
// prediction before the link (the score the loss is reported at); `klass` is a reduction's class (--oaa,
// --csoaa), 0 otherwise, with its per-class scores in `scores`.
struct SessionResult {
  bool empty = false;  // the line held no example (empty, a comment, a table's header)
  float shown = 0.0f;
  float value = 0.0f;
  float raw = 0.0f;
  uint32_t klass = 0;
  std::vector<float> scores;
};

// Rows of a compressed sparse row matrix: row i's entries are positions indptr[i] .. indptr[i + 1] - 1 of
// indices (columns) and data (values). labels and weights have one entry per row (weights may be null: 1).
// For a reduction (--oaa, --csoaa is not supported here) a label is the class number.
struct CsrRows {
  const int64_t* indptr = nullptr;
  const int64_t* indices = nullptr;
  const float* data = nullptr;
  size_t rows = 0;
  const float* labels = nullptr;  // null: unlabeled (predict only)
  const float* weights = nullptr;
};

class Session {
 public:
  // args: the command line's words after the program name. Throws ConfigError, ModelFormatError or IoError as
  // the CLI would; options that need a data stream or write outputs (data files, -p, -r, -f, --passes, a
  // cache,
  // --daemon, --distributed, readable models) are refused with a ConfigError naming them.
  explicit Session(const std::vector<std::string>& args);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One input line in the --format: learns from it (predicts only under -t) and returns the pre-update
  // prediction. A parse warning (which the CLI prints and counts) is a ParseError "input:N: message" here. A
  // learner that wants a warm-up prefix gets the first example alone (learn_csr gives it the matrix's first
  // rows).
  SessionResult learn(std::string_view line);
  SessionResult predict(std::string_view line);
  // Every row in order, learned (learn_csr; predicted under -t) or predicted: shown[i], value[i] per row
  // (either may be null), and for a reduction the class in klass[i] (may be null) and scores[i * classes() +
  // k].
  void learn_csr(const CsrRows& rows, float* shown, float* value, uint32_t* klass, float* scores);
  void predict_csr(const CsrRows& rows, float* shown, float* value, uint32_t* klass, float* scores);
  // Writes the CLI's model file (as -f does), atomically.
  void save(const std::string& path) const;

  bool test_only() const { return c_.driver.test_only; }
  uint32_t classes() const { return c_.multiclass ? static_cast<uint32_t>(c_.multiclass->classes) : 0; }
  std::string learner_name() const;
  std::string loss_name() const;
  uint64_t examples() const { return examples_; }
  // What the CLI prints before a run (e.g. an option given with -i overriding the model's).
  const std::vector<std::string>& warnings() const { return c_.warnings; }

 private:
  SessionResult run(std::string_view line, bool learn);
  void run_csr(const CsrRows& rows, bool learn, float* shown, float* value, uint32_t* klass, float* scores);
  void fill_row(const CsrRows& rows, size_t i, Example& ex);
  Prediction step(Example& ex, bool learn);
  void outcome(const Prediction& p, SessionResult& r);

  Config c_;
  Built b_;
  Example ex_, work_;
  std::vector<uint64_t> column_index_;  // column j -> the libsvm feature "j"'s hashed index (grown on demand)
  uint32_t libsvm_ns_hash_ = 0;
  uint64_t lines_ = 0;     // input lines seen (line numbers in messages)
  uint64_t examples_ = 0;  // examples learned or predicted
  uint64_t replaced_ = 0;  // non-finite outputs replaced (as the CLI's summary counts them)
  bool warm_done_ = false;
  bool header_pending_ = false;  // --format csv with a header: the next line is the header
};

}  // namespace lepus::cli
