// Option table and checks. Every option has a documented default that works without tuning.
// Flow: argv -> Boost variables -> one OptionMap (name -> values, given) -> merged with the -i model's saved
// options (conflicts are errors, except loss/link/binary which override with a warning) -> Config.
#include "cli/config.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "cli/vw_options.h"
#include "core/link.h"
#include "io/safe_files.h"
#include "lepus/errors.h"

namespace po = boost::program_options;

namespace lepus::cli {
namespace {

constexpr int kMaxBits = 32;              // -b: 2^32 slots at most, as VW (hashes are 32 bits)
constexpr uint64_t kMaxClasses = 100000;  // --oaa / --csoaa K
// An exact kernel learner (state growing with every example) is warned about once this many examples are
// read.
constexpr uint64_t kGrowingStateWarning = 10000;

// The hidden option that collects bare words (data files); dashes keep it apart from every VW name.
constexpr char kDataWords[] = "bare-data-file";

constexpr char kUsage[] =
    "Usage: lepus [OPTIONS] [DATA FILE ...]    (no data file: examples come from stdin)\n"
    "\n"
    "Examples:\n"
    "  lepus train.vw --loss_function logistic -f model      train, save the model\n"
    "  lepus -t -i model test.vw -p predictions.txt           predict with a saved model\n"
    "  zcat logs.gz | lepus -b 24 -q ab -p /dev/stdout        learn from stdin, predictions to stdout\n"
    "\n"
    "Data is VW text by default (--format libsvm | csv | tsv), plain or gzip. `lepus --learner help` lists\n"
    "the learners and when to choose each. Every option has a default that works without tuning.\n";

// lepus's own options, one row each in --help's order (each learner's come from its registry row). A model
// records the options marked restored (they shape features, loss or learner) and -i restores them;
// overridable ones the command line may change under -i, with a warning.
struct CoreOption {
  enum class Group {
    kGeneral,
    kInput,
    kTables,
    kFeatures,
    kLoss,
    kLearner,
    kReductions,
    kPasses,
    kModel,
    kOutput,
    kDistributed,
    kServing
  };
  enum class Kind { kFlag, kValue, kList };  // a switch, one value (the last given), values gathered
  enum class Restore { kNo, kYes, kOverridable };
  // What a kValue or kList option's values must be, declared as a learner's options are (an OptionSpec's kind,
  // range, whole and choices; its name comes from the row): checked by check_option_value, on the command line
  // and in a model, and shown in --help. Free text by default (a path, a name, a list of letters; those are
  // read where they are used).
  using Accepts = OptionSpec;
  Group group;
  const char* name;  // "bit_precision,b": the long name, then a one-letter one
  Kind kind;
  const char* default_value;  // nullptr: none
  Restore restore;
  const char* help;
  Accepts accepts = {"", "", OptionSpec::Kind::kText};  // free text
};
using Accepts = CoreOption::Accepts;
constexpr double kNoEnd = std::numeric_limits<double>::infinity();
// Any finite number; a whole number in [lo, hi]; a number above lo; one of the words.
Accepts any_number() { return {"", "", OptionSpec::Kind::kNumber}; }
Accepts whole(double lo, double hi = kNoEnd) {
  Accepts a;
  a.kind = OptionSpec::Kind::kNumber;
  a.range = {lo, hi};
  a.whole = true;
  return a;
}
Accepts above(double lo) {
  Accepts a;
  a.kind = OptionSpec::Kind::kNumber;
  a.range = OptionSpec::Range::above(lo);
  return a;
}
Accepts one_of(std::vector<std::string> words) {
  Accepts a;
  a.kind = OptionSpec::Kind::kText;
  a.choices = std::move(words);
  return a;
}
// --help's headings, in CoreOption::Group's order; the learners' groups come after kLastGroupBeforeLearners.
const char* const kGroupTitles[] = {"General",
                                    "Input (data files may also be given as bare words: lepus a.vw b.vw)",
                                    "CSV and TSV tables",
                                    "Feature space",
                                    "Loss and output link",
                                    "Learner",
                                    "Multiclass and cost-sensitive learning (any --learner is the base)",
                                    "Passes, cache and holdout",
                                    "Model files",
                                    "Output",
                                    "Several machines (--distributed)",
                                    "Serving (--daemon)"};
constexpr CoreOption::Group kLastGroupBeforeLearners = CoreOption::Group::kReductions;

// clang-format off
using G = CoreOption::Group;
using K = CoreOption::Kind;
using R = CoreOption::Restore;
const CoreOption kCoreOptions[] = {
    {G::kGeneral, "help,h", K::kFlag, nullptr, R::kNo,
     "this help"},
    {G::kGeneral, "version", K::kFlag, nullptr, R::kNo,
     "print lepus's version and exit"},
    {G::kGeneral, "vw_options", K::kFlag, nullptr, R::kNo,
     "list VW 9.11.2's options: those lepus implements, and its answer to the others"},
    {G::kInput, "data,d", K::kValue, nullptr, R::kNo,
     "data file, plain or gzip; - is stdin (default: the bare words, else stdin)"},
    {G::kInput, "no_stdin", K::kFlag, nullptr, R::kNo,
     "without a data file, read no examples instead of stdin (e.g. to convert a model with -i "
     "and --readable_model)"},
    {G::kInput, "format", K::kValue, "vw", R::kNo,
     "input format",
     one_of({"vw", "libsvm", "csv", "tsv"})},
    {G::kInput, "libsvm_namespace", K::kValue, "f", R::kYes,
     "namespace of libsvm features"},
    {G::kInput, "positive_label", K::kValue, nullptr, R::kOverridable,
     "this label (compared as text) becomes 1, every other label -1"},
    {G::kInput, "examples", K::kValue, nullptr, R::kNo,
     "stop after this many examples (default: all)",
     whole(0)},
    {G::kInput, "strict_parse", K::kFlag, nullptr, R::kNo,
     "the first malformed input line is an error (exit 1)"},
    {G::kInput, "max_line_bytes", K::kValue, "256M", R::kNo,
     "longest line read (K, M, G suffixes); longer is an error"},
    {G::kTables, "no_header", K::kFlag, nullptr, R::kYes,
     "the first row is data; columns are named by 0-based position"},
    {G::kTables, "label_column", K::kValue, "0", R::kYes,
     "label column: NAME or INDEX (negative: from the end)"},
    {G::kTables, "ignore_columns", K::kList, nullptr, R::kYes,
     "columns to drop (NAMEs or INDEXes, comma-separated)"},
    {G::kTables, "categorical", K::kList, nullptr, R::kYes,
     "numeric-looking columns read as strings (ids, codes)"},
    {G::kTables, "text_columns", K::kList, nullptr, R::kYes,
     "free-text columns, split into lower-cased words"},
    {G::kTables, "csv_namespace", K::kValue, "c", R::kYes,
     "namespace of the table's features"},
    {G::kTables, "text_namespace", K::kValue, nullptr, R::kYes,
     "namespace of text words (default: each column name's first letter)"},
    {G::kTables, "csv", K::kFlag, nullptr, R::kNo,
     "VW 9's CSV input: --format csv with VW's conventions (label column _label, VW's default "
     "namespace, string cells hashed as VW hashes them)"},
    {G::kTables, "csv_separator", K::kValue, nullptr, R::kNo,
     "with --csv: the cell separator, one character (VW's; \\t for TAB)"},
    {G::kTables, "csv_no_file_header", K::kFlag, nullptr, R::kNo,
     "with --csv: the file has no header line (--csv_header names the columns)"},
    {G::kTables, "csv_header", K::kValue, nullptr, R::kNo,
     "with --csv: the column names, comma-separated, instead of the file's first line"},
    {G::kFeatures, "bit_precision,b", K::kValue, "18", R::kYes,
     "number of weight-table bits: 2^b slots",
     whole(1, kMaxBits)},
    {G::kFeatures, "hash", K::kValue, "strings", R::kYes,
     "feature hashing: strings (a name that is a whole number is used as that number, as VW does) or "
     "all (every name hashed)",
     one_of({"strings", "all"})},
    {G::kFeatures, "hash_seed", K::kValue, "0", R::kYes,
     "seed of the feature hash",
     whole(0, 4294967295.0)},
    {G::kFeatures, "quadratic,q", K::kList, nullptr, R::kYes,
     "quadratic interaction ab (':' = any namespace)"},
    {G::kFeatures, "cubic", K::kList, nullptr, R::kYes,
     "cubic interaction abc"},
    {G::kFeatures, "interactions", K::kList, nullptr, R::kYes,
     "interaction of any order"},
    {G::kFeatures, "permutations", K::kFlag, nullptr, R::kYes,
     "all orderings of equal adjacent interaction terms"},
    {G::kFeatures, "leave_duplicate_interactions", K::kFlag, nullptr, R::kYes,
     "keep interactions that repeat another"},
    {G::kFeatures, "ignore", K::kList, nullptr, R::kYes,
     "drop namespaces with these first letters"},
    {G::kFeatures, "ignore_linear", K::kList, nullptr, R::kYes,
     "drop these namespaces' linear terms (they still interact)"},
    {G::kFeatures, "keep", K::kList, nullptr, R::kYes,
     "drop every namespace not listed"},
    {G::kFeatures, "ngram", K::kList, nullptr, R::kYes,
     "n-grams of up to N consecutive features of each namespace (N), or of namespace x (xN), "
     "as VW makes them"},
    {G::kFeatures, "skips", K::kList, nullptr, R::kYes,
     "n-grams may skip up to K features (K, or xK for namespace x; needs --ngram)"},
    {G::kFeatures, "noconstant", K::kFlag, nullptr, R::kYes,
     "no constant (bias) feature"},
    {G::kFeatures, "max_features", K::kValue, "10000000", R::kNo,
     "most features one example may have with its interactions; more is an error naming the "
     "line",
     whole(1)},
    {G::kLoss, "loss_function", K::kValue, "squared", R::kOverridable,
     "squared | logistic | hinge | quantile"},
    {G::kLoss, "quantile_tau", K::kValue, "0.5", R::kOverridable,
     "quantile level of the quantile loss",
     any_number()},
    {G::kLoss, "link", K::kValue, "identity", R::kOverridable,
     "printed prediction: identity | logistic | glf1 | poisson"},
    {G::kLoss, "binary", K::kFlag, nullptr, R::kOverridable,
     "print predictions as -1/1 and report 0/1 loss"},
    {G::kLearner, "learner", K::kValue, "mix", R::kYes,
     "learning algorithm (`--learner help` says when to choose each); without it, an option of VW's "
     "learner (-l, --power_t, --sgd, --adaptive, --l1, ...) or --distributed selects sgd, VW's learner"},
    {G::kLearner, "random_seed", K::kValue, "0", R::kOverridable,
     "seed of every random choice a learner makes (saved in the model)",
     whole(0)},
    {G::kLearner, "sketch_rank", K::kValue, nullptr, R::kNo,
     "the rank of a second-order learner's sketch (--matrix sketch); --rank is accepted too "
     "where the learner has a sketch (VW's --rank is another thing: its matrix factorization)"},
    {G::kReductions, "oaa", K::kValue, nullptr, R::kYes,
     "one against all: K classes, labels 1..K (or 0..K-1); one problem per class, the "
     "prediction the class of the largest score",
     whole(1, kMaxClasses)},
    {G::kReductions, "csoaa", K::kValue, nullptr, R::kYes,
     "cost-sensitive one against all: K classes, labels 'class:cost ...'; the prediction the "
     "class of the smallest predicted cost",
     whole(1, kMaxClasses)},
    {G::kReductions, "probabilities", K::kFlag, nullptr, R::kYes,
     "with --oaa: write each class's probability (logistic loss)"},
    {G::kReductions, "named_labels", K::kValue, nullptr, R::kYes,
     "class names a,b,c for classes 1, 2, 3 (labels and predictions use them)"},
    {G::kReductions, "indexing", K::kValue, nullptr, R::kYes,
     "classes numbered 0..K-1 (0) or 1..K (1); default: a label 0 or K decides",
     one_of({"0", "1"})},
    {G::kPasses, "passes", K::kValue, "1", R::kNo,
     "passes over the data (holdout is on when > 1)",
     whole(1)},
    {G::kPasses, "cache,c", K::kFlag, nullptr, R::kNo,
     "cache parsed examples in DATA.cache (reused when it matches)"},
    {G::kPasses, "cache_file", K::kValue, nullptr, R::kNo,
     "cache parsed examples in this file"},
    {G::kPasses, "kill_cache,k", K::kFlag, nullptr, R::kNo,
     "rebuild the cache even when it matches"},
    {G::kPasses, "compressed", K::kFlag, nullptr, R::kNo,
     "write the cache gzip-compressed (a compressed cache is read either way)"},
    {G::kPasses, "holdout_off", K::kFlag, nullptr, R::kNo,
     "no holdout: learn from every example in every pass"},
    {G::kPasses, "holdout_period", K::kValue, "10", R::kNo,
     "every Nth line is held out",
     whole(1)},
    {G::kPasses, "holdout_after", K::kValue, nullptr, R::kNo,
     "lines after this one are held out (instead of every Nth)",
     whole(1)},
    {G::kPasses, "early_terminate", K::kValue, "3", R::kNo,
     "stop after this many passes without holdout gain",
     whole(1)},
    {G::kPasses, "threads", K::kValue, "0", R::kNo,
     "parser threads (0 = all cores); results do not depend on it",
     whole(0, 1024)},
    {G::kPasses, "onethread", K::kFlag, nullptr, R::kNo,
     "parse and learn on one thread (--threads 1)"},
    {G::kModel, "final_regressor,f", K::kValue, nullptr, R::kNo,
     "save the final model here (atomically)"},
    {G::kModel, "initial_regressor,i", K::kValue, nullptr, R::kNo,
     "start from this model; its saved options apply"},
    {G::kModel, "readable_model", K::kValue, nullptr, R::kNo,
     "write the model as text in VW 9.11.2's layout: VW's header, then sgd's state as VW's gd "
     "writes it and an index:weight line per nonzero slot (with VW's adaptive and normalizer "
     "sums while training, not under -t); another learner's own state lines follow VW's header"},
    {G::kModel, "readable_full", K::kFlag, nullptr, R::kNo,
     "with --readable_model or --invert_hash, write lepus's own layout instead of VW's: its "
     "header (version, learner, options) and the learner's full state (sgd's per-slot sums "
     "under -t too)"},
    {G::kModel, "testonly,t", K::kFlag, nullptr, R::kNo,
     "predict only, never learn"},
    {G::kModel, "predict_only_model", K::kFlag, nullptr, R::kNo,
     "save only what prediction needs (smaller; such a model predicts with -t but cannot be "
     "trained further)"},
    {G::kModel, "save_resume", K::kFlag, nullptr, R::kNo,
     "accepted for VW scripts: lepus models always resume training"},
    {G::kModel, "save_per_pass", K::kFlag, nullptr, R::kNo,
     "also save the model after every pass, as FILE.PASS next to -f FILE"},
    {G::kOutput, "predictions,p", K::kValue, nullptr, R::kNo,
     "write predictions here (/dev/stdout for stdout)"},
    {G::kOutput, "raw_predictions,r", K::kValue, nullptr, R::kNo,
     "write raw scores (before clipping and link) here"},
    {G::kOutput, "metrics", K::kFlag, nullptr, R::kNo,
     "add evaluation figures to the summary: AUC, accuracy, log loss and calibration error "
     "for -1/1 labels, RMSE and MAE otherwise, accuracy for --oaa/--csoaa"},
    {G::kOutput, "metrics_json", K::kValue, nullptr, R::kNo,
     "write the --metrics figures to this file as JSON (--metrics not needed)"},
    {G::kOutput, "audit,a", K::kFlag, nullptr, R::kNo,
     "print each example's prediction, then its features on stdout as VW does: "
     "name:slot:value:weight, largest |weight * value| first"},
    {G::kOutput, "invert_hash", K::kValue, nullptr, R::kNo,
     "write the readable model with each slot's feature name (first seen) to this file, as "
     "--readable_model writes it otherwise"},
    {G::kOutput, "audit_regressor", K::kValue, nullptr, R::kNo,
     "with -i MODEL and the data it learned from: write each nonzero weight as "
     "name:slot:weight to this file, named by one pass over the data"},
    {G::kOutput, "progress_log", K::kValue, nullptr, R::kNo,
     "write the progress table's losses to this file as tab-separated rows, for scripts and "
     "plots: about 20 per tenfold growth of the example count (whatever -P says) and one at "
     "the end; default none"},
    {G::kOutput, "quiet", K::kFlag, nullptr, R::kNo,
     "nothing on stderr"},
    {G::kOutput, "progress,P", K::kValue, nullptr, R::kNo,
     "progress rows every N examples (integer) or at a growing factor (x.y); default factor 2"},
    {G::kDistributed, "distributed", K::kFlag, nullptr, R::kNo,
     "one rank of an MPI job (mpirun -np N lepus --distributed ...): each rank learns its "
     "shard (a data name's {rank} is the rank's number; without it the ranks share the blocks "
     "of one stream), the models are combined at the end of every pass and rank 0 writes -f, "
     "the progress table (a row at a combination, over every rank's examples) and the "
     "summary; -p, -r and --cache_file take {rank} too, for a file per rank"},
    {G::kDistributed, "sync_every", K::kValue, "0", R::kNo,
     "with --distributed, also combine the models every this many examples a rank reads (0: "
     "only at the end of each pass), so that one pass mixes what the ranks learn",
     whole(0)},
    {G::kDistributed, "sync_timeout", K::kValue, "auto", R::kNo,
     "with --distributed, end the job, naming the rank, when the others wait in a combination "
     "for a rank that has neither joined it nor shown a sign of life (reading, learning) for "
     "this many seconds; auto: 10 times the longest such silence seen so far in the job, at "
     "least 60 s; 0: wait for ever (a dead rank ends the job at once either way)"},
    {G::kServing, "daemon", K::kFlag, nullptr, R::kNo,
     "serve predictions over TCP: each example line a client writes is answered with its "
     "prediction line (as -p writes it), in order per connection"},
    {G::kServing, "listen", K::kValue, "127.0.0.1", R::kNo,
     "address to listen on; VW listens on every interface, lepus on loopback unless told "
     "(0.0.0.0: every one)"},
    {G::kServing, "port", K::kValue, "26542", R::kNo,
     "TCP port (0: any free port, see --port_file)",
     whole(0, 65535)},
    {G::kServing, "port_file", K::kValue, nullptr, R::kNo,
     "write the port listened on to this file once listening"},
    {G::kServing, "pid_file", K::kValue, nullptr, R::kNo,
     "write the daemon's process id to this file"},
    {G::kServing, "num_children", K::kValue, "0", R::kNo,
     "threads answering connections (0: one per core); VW forks this many processes, lepus "
     "runs threads",
     whole(0, 1024)},
    {G::kServing, "foreground", K::kFlag, nullptr, R::kNo,
     "stay in the foreground (by default the daemon detaches once it listens)"},
    {G::kServing, "max_connections", K::kValue, "256", R::kNo,
     "connections served at once; more are answered with an error line and closed",
     whole(1)},
    {G::kServing, "idle_timeout", K::kValue, "60", R::kNo,
     "seconds a connection may neither send nor read its answers before it is closed",
     above(0)},
};
// clang-format on

// The long name of a row ("bit_precision,b": "bit_precision").
std::string long_name(const CoreOption& o) {
  const std::string n = o.name;
  return n.substr(0, n.find(','));
}

// lepus's own option of that long name, nullptr for none (a learner's, or unknown).
const CoreOption* core_option(const std::string& name) {
  for (const CoreOption& o : kCoreOptions)
    if (long_name(o) == name) return &o;
  return nullptr;
}

// A row as a learner's option is declared, for the one check of values (check_option_value) and --help.
OptionSpec spec_of(const CoreOption& o) {
  OptionSpec s = o.accepts;
  s.name = long_name(o);
  if (o.kind == CoreOption::Kind::kFlag) s.kind = OptionSpec::Kind::kFlag;
  return s;
}

bool restored(const std::string& name) {
  const CoreOption* o = core_option(name);
  return o != nullptr && o->restore != CoreOption::Restore::kNo;
}

// VW's --rank K (with -q) is its low-rank matrix factorization; lepus's --rank is a sketch's rank.
const char* const kVwRank =
    "VW's --rank (its low-rank matrix factorization, with -q) is not in lepus; the rank of a second-order "
    "learner's "
    "sketch is --sketch_rank (e.g. --learner aioli --matrix sketch --sketch_rank 20)";

// Levenshtein distance with adjacent transpositions, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The option name an argv word names ("--passes=3" -> "passes", "-b" -> its long name), "" for a value.
std::string option_word(const std::string& a, const po::options_description& all) {
  if (a.rfind("--", 0) == 0 && a.size() > 2)
    return a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
  if (a.size() >= 2 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1]))) {
    for (const auto& o : all.options())
      if (o->canonical_display_name(po::command_line_style::allow_dash_for_short) == a.substr(0, 2))
        return o->long_name();
    return a.substr(0, 2);  // an unknown short option
  }
  return "";
}

// One line for an option lepus does not declare: VW's options get lepus's answer from the VW table (an error,
// or for a few harmless tuning knobs a note); anything else is a typo, answered with the nearest real option.
void answer_unknown(const std::string& name, const po::options_description& all,
                    std::vector<std::string>& notes) {
  const bool is_short = name.size() == 2 && name[0] == '-';
  const std::string bare = is_short ? name.substr(1) : name;
  if (const VwOption* v = is_short ? find_vw_short_option(bare) : find_vw_option(bare)) {
    VwAnswer a = vw_option_answer(*v);
    if (is_short) a.text = name + "/" + a.text;  // "-a/--audit ..."
    if (a.accepted) {
      notes.push_back("[note] " + a.text);
      return;
    }
    throw ConfigError(a.text);
  }
  const std::string shown = is_short ? name : "--" + name;
  if (is_short) throw ConfigError("unknown option " + shown + " (see lepus --help)");
  // The nearest name: one the word begins (--decay: --decay_learning_rate; never taken silently), else the
  // closest by edit distance when it is close.
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& o : all.options()) {
    const std::string& n = o->long_name();
    if (n.empty() || n == kDataWords) continue;
    const size_t d = n.rfind(name, 0) == 0 ? 0 : edit_distance(name, n);
    if (d < best_d) best_d = d, best = n;
  }
  if (!best.empty() && best_d <= std::max<size_t>(2, name.size() / 3))
    throw ConfigError("unknown option " + shown + "; did you mean --" + best + "?");
  throw ConfigError("unknown option " + shown + " (see lepus --help)");
}

struct Entry {
  std::vector<std::string> values;  // empty for an unset flag or an absent option
  bool given = false;
  bool flag = false;
  bool defaulted = false;  // the value is the command-line parser's default
};
using OptionMap = std::map<std::string, Entry>;

OptionMap from_variables(const po::variables_map& vm) {
  OptionMap m;
  for (const auto& [name, v] : vm) {
    Entry e;
    const auto& any = v.value();
    if (any.type() == typeid(bool)) {
      e.flag = true;
      e.given = boost::any_cast<bool>(any);
      if (e.given) e.values.push_back("");
    } else if (any.type() == typeid(std::string)) {
      e.values.push_back(boost::any_cast<std::string>(any));
      e.given = !v.defaulted();
      e.defaulted = v.defaulted();
    } else if (any.type() == typeid(std::vector<std::string>)) {
      e.values = boost::any_cast<std::vector<std::string>>(any);
      e.given = true;
    } else {
      continue;
    }
    m[name] = std::move(e);
  }
  return m;
}

std::string show(const std::string& name, const Entry& e) {
  if (e.flag || e.values.empty()) return e.values.empty() ? "no --" + name : "--" + name;
  std::string s;
  for (const auto& v : e.values) s += (s.empty() ? "" : " ") + ("--" + name + " " + v);
  return s;
}

// Option --name's value: a whole number for an integer T (read_whole), else a finite number (read_number).
template <typename T>
T to_number(const std::string& name, const std::string& text) {
  if constexpr (std::is_integral_v<T>) {
    if (std::is_unsigned_v<T> && text.find('-') != std::string::npos)  // a count or a size is never negative
      throw ConfigError("--" + name + " must be a whole number of at least 0, got '" + text + "'");
    if (const std::optional<T> v = read_whole<T>(text)) return *v;
  } else {
    if (const std::optional<double> v = read_number(text)) return static_cast<T>(*v);
  }
  throw ConfigError("--" + name + " expects a number, got '" + text + "'");
}

// A model is data, never a command line: it may restore only the options that shape features, loss and
// learner (marked restored in kCoreOptions), its own learner's options and the predict-only mark, each within
// its range or choices. Anything else (an output path, passes, an example count, a cache) is refused naming
// the option, before anything runs.
void check_model_options(const std::map<std::string, Entry>& saved, const LearnerRow& row,
                         const std::string& path) {
  auto bad = [&](const std::string& name, const std::string& why) {
    throw ModelFormatError(path + ": damaged or foreign lepus model: its option --" + name + " " + why +
                           "; refusing the model");
  };
  std::map<std::string, OptionSpec::Kind> learner_kinds;
  for (const auto& spec : row.options) learner_kinds[spec.name] = spec.kind;
  for (const auto& [name, e] : saved) {
    const bool learner_option = learner_kinds.count(name) != 0;
    const CoreOption* core = core_option(name);
    if (!restored(name) && !learner_option && name != "predict_only_model")
      bad(name, "is not one a model may set (only options that shape features, loss and learner)");
    if (e.values.size() > (core != nullptr && core->kind == CoreOption::Kind::kList ? 4096u : 1u))
      bad(name, "is given too many times");
    for (const auto& v : e.values) {
      if (v.size() > 4096) bad(name, "has a value too long to be real");
      const bool is_flag = (core != nullptr && core->kind == CoreOption::Kind::kFlag) ||
                           (learner_option && learner_kinds.at(name) == OptionSpec::Kind::kFlag);
      if (is_flag && !v.empty()) bad(name, "is a switch but has the value '" + v + "'");
      if (learner_option && learner_kinds.at(name) == OptionSpec::Kind::kNumber) {
        if (!read_number(v)) bad(name, "is not a finite number: '" + v + "'");
      }
    }
    const std::string v = e.values.empty() ? "" : e.values.back();
    try {
      if (core != nullptr && core->kind != CoreOption::Kind::kFlag)
        for (const auto& each : e.values) check_option_value(spec_of(*core), each);
      if (name == "named_labels") {
        split_named_labels(v);
      } else if (name == "link") {
        parse_link(v);
      } else if (name == "loss_function" || name == "quantile_tau") {
        LossOptions lo;
        lo.name = saved.count("loss_function") ? saved.at("loss_function").values.back() : "squared";
        if (saved.count("quantile_tau"))
          lo.quantile_tau = to_number<float>("quantile_tau", saved.at("quantile_tau").values.back());
        make_loss(lo);
      }
    } catch (const ConfigError& e) {
      bad(name, std::string("is out of range: ") + e.what());
    }
  }
}

// Applies the -i model's options under the command line's: equal is fine, different is an error naming both
// (a few, such as the loss, override the model's with a warning). The command line's switches of the model's
// learner count too: --sgd against a model trained without it is a conflict, never silently ignored.
void merge_model(OptionMap& m, const ModelFile& model, const std::string& path,
                 std::vector<std::string>& warnings) {
  std::map<std::string, Entry> saved;
  for (const auto& o : model.options) {
    Entry& e = saved[o.name];
    e.values.push_back(o.value);
    e.given = e.given || o.given;
    e.flag = o.value.empty();
  }
  // A model that names no learner was trained before --learner existed: sgd's, whatever today's default.
  if (!saved.count("learner")) saved["learner"] = Entry{{"sgd"}, false, false, false};
  const std::string learner = saved.at("learner").values.back();
  const LearnerRow* row = find_learner(learner);
  if (!row)
    throw ModelFormatError(path + ": the model's learner '" + learner + "' is not one this lepus has");
  check_model_options(saved, *row, path);
  std::set<std::string> names{"predict_only_model"};
  for (const CoreOption& o : kCoreOptions)
    if (o.restore != CoreOption::Restore::kNo) names.insert(long_name(o));
  for (const auto& spec : row->options) names.insert(spec.name);
  for (const auto& name : names) {
    const Entry model_entry = saved.count(name) ? saved.at(name) : Entry{};
    const auto it = m.find(name);
    if (it != m.end() && it->second.given) {
      const Entry& cmd = it->second;
      auto a = cmd.values, b = model_entry.values;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a == b) continue;
      if (const CoreOption* o = core_option(name);
          o != nullptr && o->restore == CoreOption::Restore::kOverridable) {
        warnings.push_back("[warning] " + show(name, cmd) + " overrides the model's " +
                           show(name, model_entry) + " (" + path + ")");
        continue;
      }
      if (name == "predict_only_model") continue;  // saving a full model predict-only
      throw ConfigError(show(name, cmd) + " conflicts with the model's " + show(name, model_entry) + " (" +
                        path + "); leave it out to use the model's");
    }
    if (model_entry.values.empty()) continue;  // the model has no value: the command line's default stands
    m[name] = model_entry;
  }
}

void chars_to_table(const std::vector<std::string>& specs, std::array<bool, 256>& table) {
  for (const auto& s : specs)
    for (unsigned char c : s) table[c] = true;
}

// VW 9's CSV flags, read with VW's meaning by lepus's CSV reader (VW's --csv_ns_value has no lepus meaning
// and is answered from the VW option table).

// Outputs never name an input or each other, compared by file identity (device and inode, links resolved; the
// canonical spelling for a file not made yet), before anything is opened for writing. -f may name the -i
// model: it is read whole first and replaced atomically. Devices, FIFOs and sockets (/dev/stdout) are written
// through and take no part.
void check_paths(const Config& c) {
  struct Named {
    std::string flag, path;
    FileIdentity id;
  };
  auto named = [](const std::string& flag, const std::string& path) {
    return Named{flag, path, file_identity(path)};
  };
  std::vector<Named> inputs, outputs;
  for (const auto& d : c.driver.data)
    if (d != "-") inputs.push_back(named("data file", d));
  if (!c.initial_regressor.empty()) inputs.push_back(named("-i model", c.initial_regressor));
  if (!c.final_regressor.empty()) outputs.push_back(named("-f", c.final_regressor));
  if (!c.readable_model.empty()) outputs.push_back(named("--readable_model", c.readable_model));
  if (!c.invert_hash.empty()) outputs.push_back(named("--invert_hash", c.invert_hash));
  if (!c.driver.audit.audit_regressor.empty())
    outputs.push_back(named("--audit_regressor", c.driver.audit.audit_regressor));
  if (!c.driver.cache_file.empty()) outputs.push_back(named("--cache_file", c.driver.cache_file));
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"-p", c.driver.predictions},
                                   {"-r", c.driver.raw_predictions},
                                   {"--progress_log", c.driver.progress_log}})
    if (!path.empty() && path != "-" && path != "/dev/stdout") outputs.push_back(named(flag, path));
  auto special = [](const Named& n) { return n.id.exists && !n.id.regular; };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Named& o = outputs[i];
    if (special(o)) continue;
    for (const Named& in : inputs) {
      if (special(in) || !o.id.same_as(in.id)) continue;
      if (o.flag == "-f" && in.flag == "-i model")
        continue;  // -i m -f m: read whole, then replaced atomically
      throw ConfigError(o.flag + " " + o.path + " is the " + in.flag + " " + in.path +
                        ": lepus never writes over what it reads");
    }
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!special(outputs[j]) && o.id.same_as(outputs[j].id))
        throw ConfigError(o.flag + " " + o.path + " and " + outputs[j].flag + " " + outputs[j].path +
                          " name the same file: give each output its own");
  }
}

// One row of kCoreOptions into its --help group.
void declare(po::options_description& group, const CoreOption& o) {
  using S = std::string;
  const std::string help = o.help + accepted_text(spec_of(o));
  if (o.kind == CoreOption::Kind::kFlag) {
    group.add_options()(o.name, po::bool_switch(), help.c_str());
  } else if (o.kind == CoreOption::Kind::kList) {
    group.add_options()(o.name, po::value<std::vector<S>>()->composing(), help.c_str());
  } else if (o.default_value != nullptr) {
    group.add_options()(o.name, po::value<S>()->default_value(o.default_value), help.c_str());
  } else {
    group.add_options()(o.name, po::value<S>(), help.c_str());
  }
}

// Every value the command line gives lepus's own options, checked against its row (Accepts) before any is
// read: one message for every option ("--passes must be a whole number >= 1, got '0'").
void check_core_values(const OptionMap& m) {
  for (const CoreOption& o : kCoreOptions) {
    const auto it = m.find(long_name(o));
    if (o.kind == CoreOption::Kind::kFlag || it == m.end()) continue;
    for (const auto& v : it->second.values) check_option_value(spec_of(o), v);
  }
}

// kCoreOptions' groups first..last, in order.
void declare_groups(po::options_description& all, CoreOption::Group first, CoreOption::Group last) {
  for (int g = static_cast<int>(first); g <= static_cast<int>(last); ++g) {
    po::options_description group(kGroupTitles[g]);
    for (const CoreOption& o : kCoreOptions)
      if (static_cast<int>(o.group) == g) declare(group, o);
    all.add(group);
  }
}

// Each learner row's options, a group per row.
void declare_learner_rows(po::options_description& all) {
  using S = std::string;
  // A learner family may share an option (--ftprl_radius): it is declared once, under the first row that has
  // it, and its help names every learner that takes it.
  std::map<std::string, std::vector<std::string>> option_rows;
  for (const auto& row : learner_registry())
    for (const auto& s : row.options) option_rows[s.name].push_back(row.name);
  std::set<std::string> declared;
  for (const auto& row : learner_registry()) {
    po::options_description g("Learner '" + row.name + "' options");
    for (const auto& s : row.options) {
      if (!declared.insert(s.name).second) continue;
      const std::string n = s.short_name.empty() ? s.name : s.name + "," + s.short_name;
      std::string help = s.help + accepted_text(s);  // the declared range or choices, as checked
      if (option_rows[s.name].size() > 1) {
        help += " (learners:";
        for (const auto& r : option_rows[s.name]) help += " " + r;
        help += ")";
      }
      if (s.kind == OptionSpec::Kind::kFlag) {
        g.add_options()(n.c_str(), po::bool_switch(), help.c_str());
      } else if (!s.default_value.empty()) {
        g.add_options()(n.c_str(), po::value<S>()->default_value(s.default_value), help.c_str());
      } else {
        g.add_options()(n.c_str(), po::value<S>(), help.c_str());
      }
    }
    all.add(g);
  }
}

void declare_options(po::options_description& all) {
  constexpr auto kLast = static_cast<CoreOption::Group>(std::size(kGroupTitles) - 1);
  declare_groups(all, CoreOption::Group::kGeneral, kLastGroupBeforeLearners);
  declare_learner_rows(all);
  declare_groups(all, static_cast<CoreOption::Group>(static_cast<int>(kLastGroupBeforeLearners) + 1), kLast);
}

std::vector<std::string> answer_vw_options(int argc, const char* const argv[],
                                           const po::options_description& all,
                                           std::vector<std::string>& warnings) {
  // VW options lepus does not declare are answered before Boost sees them: an error naming what lepus does
  // instead, or (a few tuning knobs with no effect here) a note, dropping the option and its value.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {  // the rest are bare words
      for (; i < argc; ++i) args.push_back(argv[i]);
      break;
    }
    const std::string name = option_word(a, all);
    const bool is_short = a.rfind("--", 0) != 0;
    if (name.empty() || (!is_short && all.find_nothrow(name, false)) || (is_short && name.size() > 2)) {
      args.push_back(a);
      continue;
    }
    const VwOption* v = is_short ? find_vw_short_option(name.substr(1)) : find_vw_option(name);
    if (!v) {
      args.push_back(a);  // Boost reports it; the catch below suggests the nearest option
      continue;
    }
    answer_unknown(is_short ? name : name, all, warnings);  // throws unless accepted
    const bool attached = is_short ? a.size() > 2 : a.find('=') != std::string::npos;
    if (v->takes_value && !attached && i + 1 < argc) ++i;  // its value goes too
  }
  return args;
}

// The command line's values (Boost's), with bare words as data files.
po::variables_map store(const std::vector<std::string>& args, const po::options_description& all,
                        std::vector<std::string>& warnings) {
  using V = std::vector<std::string>;
  po::options_description hidden;
  hidden.add_options()(kDataWords, po::value<V>()->composing(), "bare words: data files");
  po::options_description parsed;
  parsed.add(all).add(hidden);
  po::positional_options_description bare;
  bare.add(kDataWords, -1);
  po::variables_map vm;
  try {
    // Whole option names only: Boost's prefix guessing would silently turn --decay into
    // --decay_learning_rate.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(parsed).positional(bare).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    answer_unknown(name.rfind("--", 0) == 0 ? name.substr(2) : name, all, warnings);
    throw ConfigError(std::string(e.what()) + " (see lepus --help)");
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see lepus --help)");
  }
  return vm;
}

// --help, --vw_options, --version, --learner help: true when one was asked for (c then says what to show).
bool answer_info(const po::variables_map& vm, const po::options_description& all, Config& c) {
  using S = std::string;
  if (vm["help"].as<bool>()) {
    std::ostringstream s;
    s << kUsage << "\n" << all;
    c.show_help = true;
    c.help_text = s.str();
    return true;
  }
  if (vm["vw_options"].as<bool>()) {  // one line per VW option: implemented, accepted with a note, or not
    std::ostringstream s;
    for (const VwOption& o : vw_options()) {
      s << "--" << o.name << (o.short_name[0] ? std::string(" (-") + o.short_name + ")" : std::string())
        << "\t";
      if (std::string(o.name) == "rank") {  // lepus's --rank is a sketch's rank: VW's is matrix factorization
        s << "not in lepus: " << kVwRank << "\n";
      } else if (all.find_nothrow(o.name, false)) {
        s << "implemented\n";
      } else {
        const VwAnswer a = vw_option_answer(o);
        s << (a.accepted ? "accepted: " : "not in lepus: ") << a.text << "\n";
      }
    }
    c.show_help = true;
    c.help_text = s.str();
    return true;
  }
  if (vm["version"].as<bool>()) {
    c.show_version = true;
    return true;
  }
  if (vm["learner"].as<S>() == "help") {
    c.list_learners = true;
    return true;
  }
  return false;
}

// The command line's options (an -i model's merged in), read by name.
struct Args {
  OptionMap& m;
  bool given(const std::string& n) const { return m.count(n) && m.at(n).given; }
  std::string text(const std::string& n) const {
    return m.count(n) && !m.at(n).values.empty() ? m.at(n).values.back() : std::string();
  }
  bool flag(const std::string& n) const { return m.count(n) && m.at(n).flag && !m.at(n).values.empty(); }
  std::vector<std::string> list(const std::string& n) const {
    return m.count(n) ? m.at(n).values : std::vector<std::string>{};
  }
};

// A VW flag that selects a learner (its row's traits: --ftrl is --learner vw-ftrl); VW allows one at a time.
// Read before an -i model's options, so a model of another learner is a conflict naming both.
void select_vw_learner(Args& a) {
  std::vector<const LearnerRow*> chosen;
  for (const auto& r : learner_registry())
    if (!r.traits.vw_flag.empty() && a.flag(r.traits.vw_flag)) chosen.push_back(&r);
  if (chosen.size() > 1) {
    std::string flags;
    for (const LearnerRow* r : chosen) flags += (flags.empty() ? "--" : " and --") + r->traits.vw_flag;
    throw ConfigError(flags + " each select a learner: give only one of them");
  }
  if (chosen.size() == 1) {
    const LearnerRow& r = *chosen.front();
    if (a.given("learner") && a.text("learner") != r.name)
      throw ConfigError("--" + r.traits.vw_flag + " selects --learner " + r.name +
                        "; it conflicts with --learner " + a.text("learner"));
    Entry& e = a.m["learner"];
    e.values = {r.name};
    e.given = true;
    e.defaulted = false;
  }
}

// The default learner is the mixture (docs/algorithms/mix.md). A command line that tunes VW's default learner
// (its rate and schedule, its update's flags, its regularizers: what a VW user passes to VW's learner) or runs
// --distributed (the mixture has no merge) runs sgd, VW's learner, and says so in one line. An -i model keeps its
// own learner.
void choose_default_learner(Config& c, Args& a) {
  if (a.given("learner") || c.model) return;
  std::string why;  // the first of sgd's own options given (its registry row declares them)
  for (const OptionSpec& spec : find_learner("sgd")->options)
    if (a.given(spec.name) && why.empty()) why = "--" + spec.name + " tunes VW's default learner";
  if (why.empty() && a.flag("distributed"))
    why = "--distributed merges sgd's weights (the mixture has no merge)";
  if (why.empty()) return;
  Entry& e = a.m["learner"];  // as if given: the model records it as --learner sgd's would
  e.values = {"sgd"};
  e.given = true;
  e.defaulted = false;
  c.warnings.push_back("[note] " + why +
                       ": lepus runs --learner sgd (VW's; lepus's default is --learner mix)");
}

// Model files; an -i model's options are merged before anything else is read from the map.
void read_model_paths(Config& c, Args& a) {
  c.final_regressor = a.text("final_regressor");
  c.initial_regressor = a.text("initial_regressor");
  for (const char* n : {"initial_regressor", "final_regressor", "readable_model"})
    if (a.given(n) && a.text(n).empty())
      throw ConfigError(std::string("--") + n + " needs a file name, got ''");
  c.readable_model = a.text("readable_model");
  c.readable_full = a.flag("readable_full");
  if (!c.initial_regressor.empty()) {
    c.model = read_model_file(c.initial_regressor);
    merge_model(a.m, *c.model, c.initial_regressor, c.warnings);
  }
}

// Learner and its own options; another learner's options are an error, never ignored.
const LearnerRow* read_learner(Config& c, Args& a) {
  c.learner = a.text("learner");
  const LearnerRow* row = find_learner(c.learner);
  if (!row) throw ConfigError("unknown --learner '" + c.learner + "' (see lepus --learner help)");
  std::set<std::string> own;
  for (const auto& spec : row->options) own.insert(spec.name);
  if (a.given("sketch_rank")) {  // the name that does not shadow VW's --rank
    if (!own.count("rank"))
      throw ConfigError("--sketch_rank is the rank of a second-order learner's sketch; --learner " +
                        row->name + " keeps none");
    if (a.given("rank") && a.text("rank") != a.text("sketch_rank"))
      throw ConfigError("--sketch_rank " + a.text("sketch_rank") + " and --rank " + a.text("rank") +
                        " disagree");
    Entry& e = a.m["rank"];
    e.values = {a.text("sketch_rank")};
    e.given = true;
    e.defaulted = false;
  }
  if (a.given("rank") && !own.count("rank"))
    throw ConfigError(std::string("--rank ") + a.text("rank") + ": " + kVwRank);
  for (const auto& other : learner_registry()) {
    for (const auto& spec : other.options) {
      if (!own.count(spec.name) && a.given(spec.name))
        throw ConfigError("--" + spec.name + " is an option of --learner " + other.name +
                          ", not of --learner " + row->name);
    }
  }
  for (const auto& spec : row->options) {
    const bool explicit_value =
        a.m.count(spec.name) && !a.m.at(spec.name).defaulted && !a.m.at(spec.name).values.empty();
    if (spec.kind == OptionSpec::Kind::kFlag) {
      if (a.flag(spec.name)) c.learner_options.set(spec.name, "1", a.given(spec.name));
    } else if (explicit_value) {  // given, or restored from an -i model
      c.learner_options.set(spec.name, a.text(spec.name), a.given(spec.name));
    } else if (!spec.default_value.empty()) {  // this row's own default (a shared option may differ per row)
      c.learner_options.set(spec.name, spec.default_value, false);
    }
  }
  if (c.learner_options.has("matrix")) {  // a mode the learner's paper does not define: say what to use
    const std::string& mode = c.learner_options.text("matrix");
    const auto& modes = row->traits.matrix_modes;
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      std::string accepted;
      for (const auto& m : modes) accepted += (accepted.empty() ? "" : ", ") + m;
      const auto near = row->traits.matrix_nearest.find(mode);
      throw ConfigError("--learner " + row->name + " has no --matrix " + mode +
                        (near != row->traits.matrix_nearest.end() ? ": " + near->second : std::string()) +
                        " (its modes: " + accepted + ")");
    }
  }
  check_option_values(row->options, c.learner_options);  // each option's declared range or choices
  if (c.learner_options.has("power_t") && c.learner_options.number("power_t") > 1.0 && a.given("power_t"))
    c.warnings.push_back("[warning] --power_t " + a.text("power_t") +
                         " is above 1: the learning rate t^-power_t "
                         "vanishes after the first few examples, so little is learned");

  return row;
}

// Input: -d or the bare words, never both; "-" alone is stdin.
void read_input(Config& c, Args& a) {
  if (a.given("data")) c.driver.data.push_back(a.text("data"));
  for (const auto& w : a.list(kDataWords)) c.driver.data.push_back(w);
  if (a.given("data") && !a.list(kDataWords).empty()) {
    std::string words;
    for (const auto& w : a.list(kDataWords)) words += (words.empty() ? "" : " ") + w;
    throw ConfigError("-d " + a.text("data") + " and the bare word" +
                      (a.list(kDataWords).size() > 1 ? "s " : " ") + words +
                      " both name data files: give them one way (lepus A B ... or -d A)");
  }
  if (c.driver.data.size() == 1 && c.driver.data[0] == "-") c.driver.data.clear();
  c.driver.no_input = c.driver.data.empty() && a.flag("no_stdin");
  const std::string fmt = a.text("format");
  if (fmt == "vw") {
    c.driver.format = InputFormat::kVw;
  } else if (fmt == "libsvm" || fmt == "svmlight") {
    c.driver.format = InputFormat::kLibsvm;
  } else {  // csv or tsv: the row's one_of has refused any other word
    c.driver.format = InputFormat::kCsv;
    c.driver.csv.delimiter = fmt == "csv" ? ',' : '\t';
    c.driver.csv.quoted = fmt == "csv";
  }
  auto columns = [&](const std::string& n) {  // repeated and comma-separated lists
    std::vector<std::string> out;
    for (const auto& v : a.list(n)) {
      size_t start = 0;
      for (;;) {
        const size_t comma = v.find(',', start);
        const std::string part =
            v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!part.empty()) out.push_back(part);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    return out;
  };
  c.driver.csv.header = !a.flag("no_header");
  if (a.flag("csv")) {  // VW 9's CSV flags onto the same reader
    if (a.given("format") && fmt != "csv")
      throw ConfigError("--csv reads CSV; it conflicts with --format " + fmt);
    c.driver.format = InputFormat::kCsv;
    c.driver.csv.quoted = true;
    c.driver.csv.vw_strings = true;
    if (!a.given("label_column")) {  // replaces the default: a model records one label column
      a.m["label_column"].values = {"_label"};
      c.driver.csv.label_column = "_label";
    }
    if (!a.given("csv_namespace")) a.m["csv_namespace"].values = {""};
    if (a.given("csv_separator")) {
      std::string sep = a.text("csv_separator");
      if (sep == "\\t") sep = "\t";
      if (sep.size() != 1 || sep == "\"" || sep == "|" || sep == ":" || sep == "\n")
        throw ConfigError("--csv_separator must be one character other than \", | and : (got '" + sep + "')");
      c.driver.csv.delimiter = sep[0];
    }
    if (a.flag("csv_no_file_header")) {
      if (!a.given("csv_header"))
        throw ConfigError("--csv_no_file_header needs --csv_header to name the columns");
      c.driver.csv.header = false;
    }
    if (a.given("csv_header")) {  // VW separates its names with commas whatever the cell separator
      c.driver.csv.header_text = a.text("csv_header");
      std::replace(c.driver.csv.header_text.begin(), c.driver.csv.header_text.end(), ',',
                   c.driver.csv.delimiter);
    }
  } else {
    for (const char* n : {"csv_separator", "csv_no_file_header", "csv_header"})
      if (a.given(n)) throw ConfigError(std::string("--") + n + " is one of VW's CSV flags: add --csv");
  }
  c.driver.csv.label_column = a.text("label_column");
  c.driver.csv.ignore_columns = columns("ignore_columns");
  c.driver.csv.categorical = columns("categorical");
  c.driver.csv.text_columns = columns("text_columns");
  c.driver.csv.csv_namespace = a.text("csv_namespace");
  c.driver.csv.text_namespace = a.text("text_namespace");
  if (c.driver.csv.csv_namespace.empty() && !a.flag("csv"))
    throw ConfigError("--csv_namespace must not be empty");
  c.driver.parse.libsvm_namespace = a.text("libsvm_namespace");
  if (c.driver.parse.libsvm_namespace.empty()) throw ConfigError("--libsvm_namespace must not be empty");
  if (!a.list("positive_label").empty()) {
    c.driver.parse.positive_label = a.text("positive_label");
    c.driver.parse.has_positive_label = true;
  }
  if (a.given("examples")) c.driver.max_examples = to_number<uint64_t>("examples", a.text("examples"));
  c.driver.strict_parse = a.flag("strict_parse");
  {
    std::string t = a.text("max_line_bytes");
    uint64_t unit = 1;
    if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G' || t.back() == 'T')) {
      unit = t.back() == 'K'   ? 1ull << 10
             : t.back() == 'M' ? 1ull << 20
             : t.back() == 'G' ? 1ull << 30
                               : 1ull << 40;
      t.pop_back();
    }
    const uint64_t n = to_number<uint64_t>("max_line_bytes", t);
    if (n == 0 || n > (uint64_t{1} << 40) / unit)
      throw ConfigError("--max_line_bytes must be between 1 and 1T");
    c.driver.max_line_bytes = static_cast<size_t>(n * unit);
  }
}

void read_features(Config& c, Args& a) {
  c.bits = to_number<int>("bit_precision", a.text("bit_precision"));
  c.driver.parse.hash_mode = a.text("hash") == "all" ? HashMode::kAll : HashMode::kStrings;
  c.driver.parse.hash_seed = to_number<uint32_t>("hash_seed", a.text("hash_seed"));
  c.space.quadratic = a.list("quadratic");
  c.space.cubic = a.list("cubic");
  c.space.interactions = a.list("interactions");
  // --ngram N | xN, --skips K | xK (VW's compile_gram: a leading digit means every namespace).
  auto grams = [&](const char* name, std::array<uint32_t, 256>& dest) {
    for (const std::string& g : a.list(name)) {
      const bool all = !g.empty() && std::isdigit(static_cast<unsigned char>(g[0]));
      const std::string number = all ? g : g.substr(std::min<size_t>(1, g.size()));
      const std::optional<uint32_t> n =
          number.size() <= 6 && number.find_first_not_of("0123456789") == std::string::npos
              ? read_whole<uint32_t>(number)
              : std::nullopt;
      if (!n)
        throw ConfigError("--" + std::string(name) + " '" + g +
                          "': give N (every namespace) or a namespace letter " + "then N, as in w3");
      if (all)
        dest.fill(*n);
      else
        dest[static_cast<unsigned char>(g[0])] = *n;
    }
  };
  grams("ngram", c.space.ngram);
  grams("skips", c.space.skips);
  if (!a.list("skips").empty() && a.list("ngram").empty())
    throw ConfigError("--skips needs --ngram (n-grams of 2 or more)");
  c.space.permutations = a.flag("permutations");
  c.space.leave_duplicates = a.flag("leave_duplicate_interactions");
  c.space.constant = !a.flag("noconstant");
  c.space.max_features = to_number<uint64_t>("max_features", a.text("max_features"));
  chars_to_table(a.list("ignore_linear"), c.space.ignore_linear);
  chars_to_table(a.list("ignore"), c.driver.parse.drop_group);
  if (!a.list("keep").empty()) {
    if (!a.list("ignore").empty()) throw ConfigError("--keep and --ignore cannot be combined");
    std::array<bool, 256> keep{};
    chars_to_table(a.list("keep"), keep);
    for (int i = 0; i < 256; ++i) c.driver.parse.drop_group[i] = !keep[i];
  }
}

void read_loss(Config& c, Args& a, const LearnerRow* row) {
  c.loss.name = a.text("loss_function");
  // The learner's losses (its row's traits): the first is its default when none is given (aioli: logistic,
  // though it takes the squared loss too), anything else refused.
  if (!row->traits.losses.empty() && !a.given("loss_function")) c.loss.name = row->traits.losses.front();
  if (!row->accepts_loss(c.loss.name)) {
    std::string allowed;
    for (const auto& l : row->traits.losses) allowed += (allowed.empty() ? "" : ", ") + l;
    throw ConfigError("--learner " + row->name + " learns with the " + allowed +
                      " loss only, not --loss_function " + c.loss.name);
  }
  c.loss.quantile_tau = to_number<float>("quantile_tau", a.text("quantile_tau"));
  c.driver.link = parse_link(a.text("link"));
  c.driver.binary = a.flag("binary");
}

void read_reductions(Config& c, Args& a, const LearnerRow* row) {
  const std::string fmt = a.text("format");
  if (a.given("oaa") && a.given("csoaa"))
    throw ConfigError("--oaa and --csoaa are two reductions: give one of them");
  if (a.given("oaa") || a.given("csoaa")) {
    const bool oaa = a.given("oaa");
    const std::string name = oaa ? "oaa" : "csoaa";
    MulticlassOptions mc;
    mc.kind = oaa ? MulticlassOptions::Kind::kOaa : MulticlassOptions::Kind::kCsoaa;
    mc.classes = to_number<uint32_t>(name, a.text(name));
    if (a.given("indexing")) mc.indexing = a.text("indexing") == "0" ? 0 : 1;
    mc.probabilities = a.flag("probabilities");
    if (mc.probabilities && !oaa) throw ConfigError("--probabilities goes with --oaa");
    if (mc.probabilities) {
      if (!a.given("loss_function") && row->accepts_loss("logistic")) c.loss.name = "logistic";
      if (c.loss.name != "logistic")
        throw ConfigError(
            "--probabilities turns logistic scores into probabilities: use --loss_function logistic "
            "(not " +
            c.loss.name + ")");
    }
    if (a.given("named_labels")) {
      std::vector<std::string> list_of_names = split_named_labels(a.text("named_labels"));
      for (const auto& n : list_of_names)  // a label token never holds these, and ':' separates a cost
        if (n.find_first_of(" \t|:") != std::string::npos)
          throw ConfigError("--named_labels: the name '" + n +
                            "' holds a space, tab, '|' or ':', which a label "
                            "cannot");
      auto names = std::make_shared<NamedLabels>(std::move(list_of_names));
      if (names->size() != mc.classes)
        throw ConfigError("--named_labels lists " + std::to_string(names->size()) + " names but --" + name +
                          " is " + a.text(name) + ": give as many names as classes");
      if (mc.indexing == 0)
        throw ConfigError("--named_labels numbers its classes 1..K: leave out --indexing 0");
      mc.indexing = 1;
      c.driver.parse.named = std::move(names);
    }
    if (c.driver.parse.has_positive_label)
      throw ConfigError("--positive_label makes two classes of one label; it conflicts with --" + name);
    if (c.driver.binary) throw ConfigError("--binary is for two classes; it conflicts with --" + name);
    if (c.driver.link != Link::kIdentity)
      throw ConfigError("--link applies to one score; --" + name + " predicts a class" +
                        (oaa ? " (--probabilities gives probabilities)" : ""));
    if (!oaa && c.driver.format != InputFormat::kVw)
      throw ConfigError(
          "--csoaa reads cost-sensitive labels (class:cost ...) from VW text only, not --format " + fmt);
    c.driver.parse.label_mode = oaa ? LabelMode::kMulticlass : LabelMode::kCostSensitive;
    c.multiclass = mc;
  } else {
    for (const char* n : {"probabilities", "named_labels", "indexing"})
      if (a.flag(n) || a.given(n)) throw ConfigError(std::string("--") + n + " goes with --oaa or --csoaa");
  }
}

void read_output(Config& c, Args& a) {
  c.driver.predictions = a.text("predictions");
  c.driver.raw_predictions = a.text("raw_predictions");
  c.driver.progress_log = a.text("progress_log");
  c.driver.metrics = a.flag("metrics");
  c.metrics_json = a.text("metrics_json");
  c.driver.keep_metrics = !c.metrics_json.empty();
  c.driver.test_only = a.flag("testonly");
  c.driver.audit.audit = a.flag("audit");
  c.invert_hash = a.text("invert_hash");
  if (c.readable_full && c.readable_model.empty() && c.invert_hash.empty())
    throw ConfigError(
        "--readable_full sets the layout of --readable_model and --invert_hash; give one of "
        "them");
  c.driver.audit.invert_hash = !c.invert_hash.empty();
  c.driver.audit.audit_regressor = a.text("audit_regressor");
  c.driver.audit.bits = c.bits;
  if (!c.driver.audit.audit_regressor.empty()) {
    // VW's rules: the names come from one pass over the data the model learned from; nothing is learned.
    if (c.initial_regressor.empty())
      throw ConfigError("--audit_regressor audits a saved model: give it with -i");
    c.driver.test_only = true;
  }
  c.driver.audit.test_only = c.driver.test_only;
  const bool names =
      c.driver.audit.audit || c.driver.audit.invert_hash || !c.driver.audit.audit_regressor.empty();
  c.driver.parse.keep_names = names;
  c.space.keep_names = names;
  c.quiet = a.flag("quiet");
}

void read_daemon(Config& c, Args& a) {
  // VW's rule: --port or --pid_file alone starts the daemon, as --daemon does.
  c.daemon = a.flag("daemon") || a.given("port") || a.given("pid_file");
  if (c.daemon) {
    if (!c.driver.data.empty())
      throw ConfigError("--daemon reads examples from its clients, not from data files");
    ServeOptions& so = c.serve;
    so.listen = a.text("listen");
    const auto port = to_number<uint64_t>("port", a.text("port"));
    so.port = static_cast<uint16_t>(port);
    so.threads = to_number<int>("num_children", a.text("num_children"));
    so.max_connections = to_number<size_t>("max_connections", a.text("max_connections"));
    so.idle_seconds = to_number<double>("idle_timeout", a.text("idle_timeout"));
    // A line is held whole before it is answered: the daemon's default is 1 MiB a connection, not 256 MiB.
    so.max_line_bytes = a.given("max_line_bytes") ? c.driver.max_line_bytes : size_t{1} << 20;
    so.test_only = c.driver.test_only;
    so.parse = c.driver.parse;
    so.link = c.driver.link;
    so.binary = c.driver.binary;
    so.save_path = c.final_regressor;
    c.pid_file = a.text("pid_file");
    c.port_file = a.text("port_file");
    c.foreground = a.flag("foreground");
  } else {
    for (const char* n : {"port_file", "foreground"})
      if (a.flag(n) || a.given(n))
        throw ConfigError(std::string("--") + n + " goes with --daemon (or --port)");
  }
}

// -P: VW's rows every N examples or at a growing factor.
void read_progress(Config& c, Args& a) {
  if (!a.list("progress").empty()) {
    const std::string p = a.text("progress");
    if (!read_number(p)) throw ConfigError("--progress expects a number, got '" + p + "'");
    double v = *read_number(p);
    // VW's reading: without a '.', rows every N examples (at least 1); with one, a growing factor, and a
    // factor
    // <= 1 has 1 added to it.
    c.driver.progress_additive = p.find('.') == std::string::npos;
    if (c.driver.progress_additive && v < 1.0) {
      c.warnings.push_back("[warning] -P " + p + ": rows every N examples needs N >= 1; using 1");
      v = 1.0;
    } else if (!c.driver.progress_additive && v <= 1.0) {
      v += 1.0;
      c.warnings.push_back("[warning] -P " + p + ": a growing factor must be > 1; using " +
                           std::to_string(v).substr(0, 4));
    } else if (!c.driver.progress_additive && v > 9.0) {
      c.warnings.push_back("[warning] -P " + p +
                           ": a factor this large prints few rows; for rows every N examples "
                           "give an integer");
    }
    c.driver.progress = v;
  }
}

// --passes (checked against the learner by read_passes, after --distributed's rules).
void read_pass_count(Config& c, Args& a) {
  c.driver.passes = to_number<int>("passes", a.text("passes"));
  if (c.daemon && c.driver.passes > 1) throw ConfigError("--daemon learns in one pass: leave out --passes");
}

void read_distributed(Config& c, Args& a, const LearnerRow* row) {
  c.distributed = a.flag("distributed");
  if (c.distributed) {
    if (c.daemon) throw ConfigError("--distributed trains over data files; --daemon serves: choose one");
    if (row->traits.merge.empty())
      throw ConfigError("--learner " + row->name +
                        " has no sound merge of its state across ranks, so no "
                        "--distributed (sgd has: VW's weighted average)");
    if (!row->traits.merge_matrix.empty() && c.learner_options.has("matrix") &&
        c.learner_options.text("matrix") != row->traits.merge_matrix)
      throw ConfigError("--learner " + row->name + " combines its state across ranks with --matrix " +
                        row->traits.merge_matrix + " only; add --matrix " + row->traits.merge_matrix +
                        " to a --distributed run");
    if (c.multiclass) throw ConfigError("--distributed does not combine --oaa/--csoaa models yet");
    if (c.driver.data.empty()) throw ConfigError("--distributed reads data files (stdin is one process's)");
    // -p, -r and --cache_file are per rank when their name has {rank} (each rank its own file, as with {rank}
    // data); -c when every data name has {rank} (the cache is named after them). Other outputs would be per
    // rank (or per example) and are not combined yet: refused, never written half.
    const auto ranked = [](const std::string& name) { return name.find("{rank}") != std::string::npos; };
    const bool data_ranked = std::all_of(c.driver.data.begin(), c.driver.data.end(), ranked);
    for (const std::string n :
         {"predictions", "raw_predictions", "cache_file", "cache", "audit", "invert_hash", "audit_regressor",
          "progress_log", "metrics", "metrics_json", "save_per_pass"}) {
      if (!(a.flag(n) || a.given(n))) continue;
      const bool per_rank =
          n == "cache"
              ? data_ranked
              : (n == "predictions" || n == "raw_predictions" || n == "cache_file") && ranked(a.text(n));
      if (per_rank) continue;
      std::string hint = "leave it out of a --distributed run (train with -f, then use the model)";
      if (n == "cache")
        hint = "name each rank's cache with --cache_file NAME{rank}, or use {rank} data files";
      if (n == "predictions" || n == "raw_predictions" || n == "cache_file")
        hint = "put {rank} in its name for a file per rank (--" + n + " NAME{rank})";
      throw ConfigError("--" + n + " is not combined across ranks; " + hint);
    }
    c.driver.sync_every = to_number<uint64_t>("sync_every", a.text("sync_every"));
    if (a.text("sync_timeout") != "auto") {
      const double seconds = read_number(a.text("sync_timeout")).value_or(-1.0);
      if (!(seconds >= 0.0))
        throw ConfigError("--sync_timeout must be auto or a number of seconds, 0 or more");
      c.sync_timeout = seconds == 0.0 ? SyncTimeout{SyncTimeout::Mode::kNone, 0.0}
                                      : SyncTimeout{SyncTimeout::Mode::kFixed, seconds};
    }
  } else {
    for (const char* n : {"sync_every", "sync_timeout"})
      if (a.given(n))
        throw ConfigError(std::string("--") + n +
                          " is for the ranks of a --distributed run; add --distributed "
                          "(under mpirun)");
  }
}

// What a run over data files writes has no meaning for a server: refused, never ignored.
void refuse_daemon_outputs(const Config& c, Args& a) {
  if (!c.daemon) return;
  // -p and -r are VW's way to watch a daemon: each answered line's prediction (or raw score) is written there
  // too.
  for (const char* n : {"audit", "invert_hash", "audit_regressor", "progress_log", "metrics", "metrics_json",
                        "readable_model", "cache", "cache_file", "save_per_pass", "examples"})
    if (a.flag(n) || a.given(n))
      throw ConfigError(std::string("--") + n +
                        " is for runs over data files; --daemon answers each client on " +
                        "its connection (save the model with -f and a `save` line, or SIGTERM)");
}

// Passes, cache, holdout, threads.
void read_passes(Config& c, Args& a, const LearnerRow* row) {
  if (c.driver.passes > 1 && !row->traits.passes &&
      (row->traits.passes_with.empty() || !a.given(row->traits.passes_with)))
    throw ConfigError(
        "--learner " + row->name + " learns in one pass over the data; leave out --passes" +
        (row->traits.passes_with.empty() ? std::string() : " or give --" + row->traits.passes_with));
  // A second-order matrix (any --matrix mode but diag) or a kernel store: the update outweighs parsing.
  c.driver.learn_thread = row->traits.state_grows ||
                          (c.learner_options.has("matrix") && c.learner_options.text("matrix") != "diag");
  if (row->traits.state_grows && (row->traits.passes_with.empty() || !a.given(row->traits.passes_with))) {
    c.driver.growing_state_warning = kGrowingStateWarning;
    c.driver.growing_state_advice =
        "--learner " + row->name +
        " keeps every example it learns from, so each new one costs more time and "
        "memory" +
        (row->traits.passes_with.empty() ? std::string() : "; --" + row->traits.passes_with + " bounds both");
  }
  if (!a.text("cache_file").empty()) {
    c.driver.cache_file = a.text("cache_file");
  } else if (a.flag("cache")) {
    if (c.driver.data.empty())
      throw ConfigError("-c with stdin input needs --cache_file FILE (there is no data file name to extend)");
    c.driver.cache_file = c.driver.data[0] + ".cache";  // several data files: named after the first
  }
  c.driver.kill_cache = a.flag("kill_cache");
  if (!c.driver.audit.audit_regressor.empty() && (c.driver.passes > 1 || !c.driver.cache_file.empty()))
    throw ConfigError("--audit_regressor reads the data once, as text: leave out --passes and the cache");
  if (c.driver.passes > 1 && c.driver.data.empty() && c.driver.cache_file.empty())
    throw ConfigError("--passes " + a.text("passes") + " reads stdin more than once: add --cache_file FILE");
  c.driver.holdout_off = a.flag("holdout_off");
  c.driver.holdout_period = to_number<uint64_t>("holdout_period", a.text("holdout_period"));
  if (c.driver.holdout_period == 1 && c.driver.passes > 1 && !c.driver.holdout_off &&
      !a.given("holdout_after"))
    throw ConfigError(
        "--holdout_period 1 holds out every example, so nothing would be learned: give a period of at "
        "least 2, or --holdout_off");
  if (a.given("holdout_after")) {
    c.driver.holdout_after = to_number<uint64_t>("holdout_after", a.text("holdout_after"));
  }
  c.driver.early_terminate = to_number<int>("early_terminate", a.text("early_terminate"));
  c.driver.threads = to_number<int>("threads", a.text("threads"));
  if (a.flag("onethread")) {
    if (a.given("threads") && c.driver.threads != 1)
      throw ConfigError("--onethread conflicts with --threads " + a.text("threads"));
    c.driver.threads = 1;
  }
  c.driver.compressed_cache = a.flag("compressed");
}

// What decides how the data is parsed, for a cache to be reused only by a run that parses alike.
std::string parse_fingerprint(const Config& c, Args& a) {
  const std::string fmt = a.text("format"), hash = a.text("hash");
  std::string fp = "format=" + fmt + ";hash=" + hash + ";seed=" + a.text("hash_seed") +
                   ";libsvm_namespace=" + c.driver.parse.libsvm_namespace + ";positive_label=" +
                   (c.driver.parse.has_positive_label ? "1:" + c.driver.parse.positive_label : "0") +
                   ";drop=";
  for (int i = 0; i < 256; ++i) fp += c.driver.parse.drop_group[i] ? '1' : '0';
  fp += ";labels=" + std::to_string(static_cast<int>(c.driver.parse.label_mode));
  if (c.driver.parse.named)
    for (const auto& n : c.driver.parse.named->names()) fp += "," + n;
  if (c.driver.format == InputFormat::kCsv) {
    const CsvOptions& o = c.driver.csv;
    fp += std::string(";csv=") + o.delimiter + (o.header ? "h" : "n") + (o.vw_strings ? "v" : "") +
          ";header=" + o.header_text + ";label=" + o.label_column + ";ns=" + o.csv_namespace +
          ";textns=" + o.text_namespace;
    for (const auto* l : {&o.ignore_columns, &o.categorical, &o.text_columns}) {
      fp += ";";
      for (const auto& x : *l) fp += x + ",";
    }
  }
  return fp;
}

// Model-file flags.
void read_model_flags(Config& c, Args& a) {
  c.predict_only_model = a.flag("predict_only_model");
  c.save_per_pass = a.flag("save_per_pass");
  if (c.save_per_pass && c.final_regressor.empty())
    throw ConfigError("--save_per_pass needs -f FILE to name the saves");
  if (a.flag("save_resume"))
    c.warnings.push_back("[note] --save_resume is how lepus always saves: every model can resume training");
  if (c.model && c.model->predict_only() && !c.driver.test_only)
    throw ConfigError(c.initial_regressor +
                      " is a predict-only model (saved with --predict_only_model): it "
                      "predicts with -t but cannot be trained further; train from a full model");
  if (c.model && c.model->predict_only()) c.predict_only_model = true;  // what it lacks cannot be saved again
  c.random_seed = to_number<uint64_t>("random_seed", a.text("random_seed"));
}

// What a saved model records: every shaping option in force, and the learner's own options.
void record_saved_options(Config& c, Args& a, const LearnerRow* row) {
  for (const CoreOption& o : kCoreOptions) {
    const std::string n = long_name(o);
    if (o.restore == CoreOption::Restore::kNo || !a.m.count(n)) continue;
    for (const auto& v : a.m.at(n).values) c.saved_options.push_back(SavedOption{n, v, a.m.at(n).given});
  }
  for (const auto& spec : row->options) {
    if (!c.learner_options.has(spec.name)) continue;
    const bool flag_option = spec.kind == OptionSpec::Kind::kFlag;
    c.saved_options.push_back(SavedOption{spec.name, flag_option ? "" : c.learner_options.text(spec.name),
                                          c.learner_options.given(spec.name)});
  }
  if (c.predict_only_model) c.saved_options.push_back(SavedOption{"predict_only_model", "", true});
}

}  // namespace

Config parse_command_line(int argc, const char* const argv[]) {
  Config c;
  po::options_description all;
  declare_options(all);
  const po::variables_map vm = store(answer_vw_options(argc, argv, all, c.warnings), all, c.warnings);
  if (answer_info(vm, all, c)) return c;
  OptionMap m = from_variables(vm);
  check_core_values(m);
  Args a{m};
  select_vw_learner(a);
  read_model_paths(c, a);
  choose_default_learner(c, a);
  const LearnerRow* row = read_learner(c, a);
  read_input(c, a);
  read_features(c, a);
  read_loss(c, a, row);
  read_reductions(c, a, row);
  read_output(c, a);
  read_daemon(c, a);
  read_progress(c, a);
  read_pass_count(c, a);
  read_distributed(c, a, row);
  refuse_daemon_outputs(c, a);
  read_passes(c, a, row);
  c.driver.parse_fingerprint = parse_fingerprint(c, a);
  read_model_flags(c, a);
  check_paths(c);
  record_saved_options(c, a, row);
  return c;
}

}  // namespace lepus::cli
