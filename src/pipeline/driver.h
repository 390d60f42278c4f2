// The run: read lines, parse, expand features, learn or predict in input order, keep VW's progressive
// validation figures, print the progress table and write predictions. Single-threaded for now.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <string>

#include "core/feature_space.h"
#include "core/link.h"
#include "formats/format.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "pipeline/progress.h"

namespace lepus {

enum class InputFormat { kVw, kLibsvm };

struct DriverOptions {
  std::string data;  // "" = stdin
  InputFormat format = InputFormat::kVw;
  ParseOptions parse;
  std::string predictions;      // -p
  std::string raw_predictions;  // -r
  bool test_only = false;       // -t
  bool strict_parse = false;
  Link link = Link::kIdentity;
  bool binary = false;
  double progress = 2.0;           // -P: next row when the weight reaches D; D *= progress (or += when additive)
  bool progress_additive = false;
  uint64_t max_examples = std::numeric_limits<uint64_t>::max();  // --examples
  size_t warnings_shown = 10;      // the first few parse warnings are printed, all are counted
};

struct RunStats {
  uint64_t examples = 0;             // VW's example_number
  double weighted_labeled = 0.0;     // wl
  double weighted_unlabeled = 0.0;   // wu
  double sum_loss = 0.0;
  double weighted_labels = 0.0;
  uint64_t total_features = 0;
  uint64_t warnings = 0;
  BestConstantInput labels;
  std::optional<double> average_loss() const {
    if (weighted_labeled == 0.0) return std::nullopt;
    return sum_loss / weighted_labeled;
  }
};

class LineReader;
class PredictionFile;

class Driver {
 public:
  // log receives the table and warnings; nullptr for --quiet. Opens the input and the prediction files
  // (throwing IoError) so that a bad path is reported before anything else is printed.
  Driver(const DriverOptions& options, Learner& learner, FeatureSpace& space, const Loss& loss, std::ostream* log);
  ~Driver();
  RunStats run();
  // The summary block, after run().
  std::string summary(const RunStats& stats) const;

 private:
  DriverOptions opt_;
  Learner& learner_;
  FeatureSpace& space_;
  const Loss& loss_;
  std::ostream* log_;
  std::unique_ptr<LineReader> reader_;
  std::unique_ptr<PredictionFile> pred_out_;
  std::unique_ptr<PredictionFile> raw_out_;
};

}  // namespace lepus
