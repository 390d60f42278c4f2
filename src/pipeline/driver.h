// The run: a oneTBB pipeline per pass. A serial stage reads blocks of whole lines (or cache records), a parallel
// stage parses them into batches of hashed examples, and a serial in-order stage expands interactions, learns
// or predicts, keeps VW's progressive-validation and holdout figures, prints the table and writes predictions.
// Results do not depend on the thread count: parsing is pure and learning happens in input order.
// The pieces: pipeline/sources.h (what a pass reads), pass_runner.h (the stages and threads of a pass),
// progress.h (VW's table), sinks.h (-p, -r, --progress_log), rank_sync.h (--distributed's sums), audit.h and
// metrics.h; the Driver is what a pass does with each example, the passes, holdout, the cache, and when the ranks
// synchronise.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "core/link.h"
#include "dist/collective.h"
#include "formats/csv.h"
#include "formats/format.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "pipeline/audit.h"
#include "pipeline/progress.h"
#include "pipeline/rank_sync.h"

namespace lepus {

enum class InputFormat { kVw, kLibsvm, kCsv };

struct DriverOptions {
  std::vector<std::string> data;  // data files, read one after another as one stream; none = stdin
  bool no_input = false;          // --no_stdin without data files: no examples at all
  InputFormat format = InputFormat::kVw;
  ParseOptions parse;
  CsvOptions csv;               // --format csv / tsv
  std::string predictions;      // -p
  std::string raw_predictions;  // -r
  std::string progress_log;     // --progress_log: the table's figures as TSV at even steps on a log axis
  bool metrics = false;         // --metrics: evaluation figures in the summary (pipeline/metrics.h)
  bool keep_metrics = false;    // --metrics_json: kept for metrics_json() even without --metrics
  AuditOptions audit;           // --audit, --invert_hash, --audit_regressor (pipeline/audit.h)
  bool test_only = false;       // -t
  bool strict_parse = false;
  Link link = Link::kIdentity;
  bool binary = false;
  double progress = 2.0;  // -P: next row when the weight reaches D; D *= progress (or += when additive)
  bool progress_additive = false;
  uint64_t max_examples = std::numeric_limits<uint64_t>::max();  // --examples
  size_t warnings_shown = 10;                 // the first few parse warnings are printed, all are counted
  int threads = 0;                            // --threads; 0 = all cores
  size_t max_line_bytes = size_t{256} << 20;  // --max_line_bytes
  // 64 KiB: a block and the examples parsed from it fit in a core's L2 (at 256 KiB they did not). On rcv1
  // (--loss_function logistic) about 10% less CPU than 256 KiB, parallel and --onethread; 32 KiB is no better,
  // 1 MiB worse. Memory stays below VW's.
  size_t block_size = size_t{1} << 16;
  // Learn on a thread of its own, fed in order through a queue, instead of in the pipeline's last filter (which
  // oneTBB runs on whichever worker reaches it): for a learner whose update outweighs parsing and whose state is
  // large (a second-order matrix, a kernel store), so the state stays in one core's caches and no parsing worker
  // waits inside a long update. A light learner is faster inline, where the batch it reads was just parsed by the
  // same worker, unless interactions make its examples long (Driver::learns_apart). Ignored with one thread.
  bool learn_thread = false;
  // A learner whose state grows with every example (an exact kernel learner): warned once, when this many
  // examples have been read (0: never), with this advice.
  uint64_t growing_state_warning = 0;
  std::string growing_state_advice;

  // Passes, cache and holdout (VW 9.11.2's semantics).
  int passes = 1;
  std::string cache_file;  // "" = no cache
  bool kill_cache = false;
  bool holdout_off = false;
  uint64_t holdout_period = 10;
  uint64_t holdout_after = 0;  // 0 = not set
  int early_terminate = 3;
  std::string parse_fingerprint;  // the parse-shaping options, recorded in the cache header
  bool compressed_cache = false;  // --compressed: write the cache gzip-compressed

  // --distributed: the job's ranks (dist/collective.h; nullptr: a single process). The model is combined at the end
  // of every pass (Learner::merge) and every `sync_every` examples a rank reads (0: only at the end of a pass); the
  // progress table, the holdout loss and the summary's figures are summed over the ranks.
  Collective* ranks = nullptr;
  uint64_t sync_every = 0;
  bool stripe_blocks =
      false;  // the ranks read one stream: rank r learns its blocks r, r + N, ... (else its own files)
};

struct RunStats {
  uint64_t examples = 0;            // VW's example_number (non-holdout examples, all passes)
  double weighted_labeled = 0.0;    // wl
  double weighted_unlabeled = 0.0;  // wu
  double sum_loss = 0.0;
  double weighted_labels = 0.0;
  uint64_t total_features = 0;
  uint64_t warnings = 0;
  BestConstantInput labels;
  int passes_used = 0;
  bool holdout_on = false;
  std::optional<float> best_holdout;  // best per-pass holdout loss
  std::optional<double> average_loss() const {
    if (weighted_labeled == 0.0) return std::nullopt;
    return sum_loss / weighted_labeled;
  }
};

class Batch;
class BlockSource;
class CacheWriter;
class PredictionFile;
class ProgressLog;
class Metrics;

class Driver {
 public:
  // log receives the table and warnings; nullptr for --quiet. Opens the input, the cache and the prediction
  // files (throwing IoError) so that a bad path is reported before anything else is printed.
  Driver(const DriverOptions& options, Learner& learner, FeatureSpace& space, const Loss& loss,
         std::ostream* log);
  ~Driver();
  // Preamble line about the cache: "using no cache", "creating cache_file = F" or "using cache_file = F".
  std::string cache_status() const;
  // Runs every pass. save_model (may be empty) is called when the model should be written: after a pass
  // that improved the holdout loss, or at the end when there is no holdout. after_pass (may be empty) is called
  // with the pass number (1, 2, ...) after every completed pass (--save_per_pass).
  RunStats run(const std::function<void()>& save_model, const std::function<void(int)>& after_pass = {});
  std::string summary(const RunStats& stats) const;
  // --metrics_json: the run's evaluation figures as one JSON object ("" without --metrics or --metrics_json).
  std::string metrics_json() const;
  // The run's figures VW's readable model holds (its shared_data as the run ends), from run()'s stats.
  VwRunFigures vw_figures(const RunStats& stats) const;
  // --audit, --invert_hash, --audit_regressor; nullptr when none was asked for.
  Auditor* auditor() const { return audit_.get(); }

 private:
  struct PassState;
  // A reduction's example (--oaa, --csoaa): its loss, and its -p and -r lines and table entries written.
  double class_loss(const Example& ex, const ClassOutcome& o, bool holdout);
  void write_classes(const Example& ex, const ClassOutcome& o, std::string& label_text,
                     std::string& prediction_text);
  std::string class_name(uint32_t klass) const;
  bool learns_apart() const;
  int thread_count() const;
  void run_pass(BlockSource& source, bool records, RunStats& st, PassState& ps);
  void parse_batch(Batch& b, bool records) const;
  void consume_batch(Batch& b, RunStats& st, PassState& ps);
  void consume(Example& ex, RunStats& st, PassState& ps);
  // Predicts or learns `work` (ex expanded), writes its outputs and counts it (record).
  void finish(const Example& ex, const Example& work, bool holdout, RunStats& st, PassState& ps);
  // `outcome`: a reduction's outcome of this example (from a block), else the learner's class_outcome().
  void record(const Example& ex, const Example& work, bool holdout, Prediction p, RunStats& st, PassState& ps,
              const ClassOutcome* outcome = nullptr);
  // Blocks (LearnsBlocks::block_size): an example held until its block is learned, then finished in order.
  void hold(const Example& ex, const Example& work, bool holdout);
  void flush_block(RunStats& st, PassState& ps);
  // Hands the buffered prefix to the learner's warm-up, then finishes its examples in order.
  void flush_warmup(RunStats& st, PassState& ps);
  std::unique_ptr<BlockSource> open_text() const;
  // The CSV delimiter when records may span lines (RFC 4180 quoted cells: --format csv, not tsv), else -1.
  int csv_records() const;
  void save_model_now(const std::function<void()>& save_model);
  struct Location {
    std::string source;
    uint64_t line;
  };
  Location locate(const PassState& ps, uint64_t stream_line) const;  // a stream line's file and line in it
  // The losses the table and --progress_log report: progressive validation's, or in holdout passes (pass 2 on,
  // holdout on) the held-out examples' over every such pass.
  LossSum reported_losses(const RunStats& st, bool holdout_mode) const;
  // One synchronisation (collective: every rank calls it as many times as every other): the figures are summed,
  // the learner merges, and rank 0's table gets a row when one is due. `ended`: this rank's pass has ended.
  RankSums sync(const RunStats& st, const PassState& ps, bool ended);
  bool shared_table() const;  // more than one rank: the table's rows come at synchronisations

  DriverOptions opt_;
  Learner& learner_;
  FeatureSpace& space_;
  const Loss& loss_;
  std::ostream* log_;
  ProgressTable table_;             // VW's progressive-validation table (printed to log_)
  bool logistic_;                   // the loss is the logistic: --metrics reads scores as probabilities
  std::vector<std::string> names_;  // the data files' names in messages ("stdin" for stdin)
  std::string header_;              // CSV/TSV: the first file's header line
  bool interactive_ = false;        // input is a pipe or terminal: flush predictions after every block
  std::unique_ptr<BlockSource> text_;
  std::unique_ptr<BlockSource> cache_in_;
  std::unique_ptr<CacheWriter> cache_out_;
  std::unique_ptr<PredictionFile> pred_out_;
  std::unique_ptr<PredictionFile> raw_out_;
  std::unique_ptr<ProgressLog> progress_log_;  // --progress_log
  std::string cache_rebuild_reason_;
  // The example being learned, with its interactions expanded (without interactions, the batch's example is
  // expanded where it lies and this is not used).
  Example work_;
  // The warm-up (a learner that looks at a prefix before its first prediction: a kernel's bandwidth): the first
  // examples, as read and expanded, held until the learner has seen them; then predicted and learned in order.
  struct Held {
    Example ex, work;
    bool holdout;
  };
  std::vector<Held> warm_;
  // The block being gathered: pointers into the batch being consumed (flushed before it ends), the expanded
  // copies when interactions are expanded into work_.
  struct Pending {
    const Example* ex;
    const Example* work;
    bool holdout;
  };
  LearnsBlocks* blocks_ = nullptr;                           // the learner, when it learns blocks
  const Reduction* reduction_ = nullptr;                     // the learner, when it is a reduction
  size_t block_ = 0;                                         // examples per block (0: one at a time)
  static constexpr size_t kBlockFeatures = size_t{1} << 16;  // a block ends once it holds this many features
  size_t pending_features_ = 0;
  std::vector<Pending> pending_;
  std::vector<Example> pending_work_;
  std::vector<Learner::BlockItem> block_items_;
  bool warm_done_ = false;
  ProgressRow last_row_;  // --distributed, more than one rank: this rank's last example, for a row at a sync
  uint64_t since_sync_ = 0;  // --sync_every: examples read since the last synchronisation
  double holdout_loss_total_ = 0.0, holdout_weight_total_ = 0.0;
  bool label_warned_ = false, binary_warned_ = false;
  uint64_t warnings_ = 0;
  uint64_t seen_ = 0;                 // examples consumed, for --examples
  std::unique_ptr<Metrics> metrics_;  // --metrics, --metrics_json
  std::unique_ptr<Auditor> audit_;    // --audit, --invert_hash, --audit_regressor
  uint64_t clamped_losses_ =
      0;  // example losses past the float range (extreme labels), counted at its largest
  uint64_t replaced_outputs_ = 0;  // NaN or infinite predictions (or linked predictions) replaced
  double class_log_loss_ = 0.0;    // --probabilities: sum of weight * -log p(true class), learned examples
  double holdout_class_log_loss_ = 0.0;  // the same over held-out examples
  bool class_probabilities_ =
      false;  // some example had class probabilities (the summary reports the log loss)
  std::atomic<bool> stop_{false};
};

}  // namespace lepus
