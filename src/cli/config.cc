// Option table and checks. Every option has a documented default that works without tuning.
// Flow: argv -> Boost variables -> one OptionMap (name -> values, given) -> merged with the -i model's saved
// options (conflicts are errors, except loss/link/binary which override with a warning) -> Config.
#include "cli/config.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "lepus/errors.h"

namespace po = boost::program_options;

namespace lepus::cli {
namespace {

// VW options lepus does not have, each with the lepus learners closest to it (the first registered one is named).
struct Missing {
  const char* vw_option;
  std::vector<const char*> nearest;
};
const Missing kMissing[] = {
    {"ftrl", {"ftprl-diag", "sgd"}},       {"ftrl_alpha", {"ftprl-diag", "sgd"}},
    {"ftrl_beta", {"ftprl-diag", "sgd"}},  {"pistol", {"scinol-coord", "sgd"}},
    {"coin", {"scinol-coord", "sgd"}},     {"freegrad", {"scinol-coord", "sgd"}},
    {"bfgs", {"full-matrix", "sgd"}},      {"conjugate_gradient", {"full-matrix", "sgd"}},
    {"OjaNewton", {"sketched", "sgd"}},    {"ksvm", {"kons", "sgd"}},
    {"lrq", {"sgd"}},                      {"lrqfa", {"sgd"}},
    {"nn", {"sgd"}},                       {"stage_poly", {"sgd"}},
    {"sparse_l2", {"sgd"}},                {"new_mf", {"sgd"}},
    {"boosting", {"sgd"}},                 {"bootstrap", {"sgd"}},
    {"oaa", {"sgd"}},                      {"ect", {"sgd"}},
    {"csoaa", {"sgd"}},                    {"cb", {"sgd"}},
    {"cb_explore", {"sgd"}},               {"cb_adf", {"sgd"}},
    {"lda", {"sgd"}},                      {"active", {"sgd"}},
    {"daemon", {"sgd"}},                   {"search", {"sgd"}},
    {"log_multi", {"sgd"}},                {"recall_tree", {"sgd"}},
    {"topk", {"sgd"}},                     {"marginal", {"sgd"}},
    {"audit", {"sgd"}},                    {"invert_hash", {"sgd"}},
};
const std::map<std::string, std::string> kShortToLong = {};

// Options a model records and -i restores. Learner rows' options are added for the model's learner.
const char* const kShaping[] = {"bit_precision", "hash", "hash_seed", "quadratic", "cubic", "interactions",
                                "permutations", "leave_duplicate_interactions", "ignore", "ignore_linear", "keep",
                                "noconstant", "libsvm_namespace", "positive_label", "no_header", "label_column",
                                "ignore_columns", "categorical", "text_columns", "csv_namespace",
                                "text_namespace", "loss_function",
                                "quantile_tau", "link", "binary", "learner"};
// Of those, the ones a command line may change under -i (with a warning).
const std::set<std::string> kOverridable = {"loss_function", "quantile_tau", "link", "binary", "positive_label"};

void reject_missing(int argc, const char* const argv[]) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string name;
    if (a.rfind("--", 0) == 0) {
      name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    } else if (a.size() == 2 && a[0] == '-' && kShortToLong.count(a.substr(1))) {
      name = kShortToLong.at(a.substr(1));
    } else {
      continue;
    }
    for (const auto& m : kMissing) {
      if (name != m.vw_option) continue;
      std::string nearest = "sgd";
      for (const char* n : m.nearest)
        if (find_learner(n)) {
          nearest = n;
          break;
        }
      throw ConfigError("--" + name + " is a VW option lepus does not have; the nearest lepus learner is "
                        "--learner " + nearest + " (see lepus --learner help)");
    }
  }
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

// Applies the -i model's options under the command line's: equal is fine, different is an error naming both.
void merge_model(OptionMap& m, const ModelFile& model, const std::string& path, std::vector<std::string>& warnings) {
  std::map<std::string, Entry> saved;
  for (const auto& o : model.options) {
    Entry& e = saved[o.name];
    e.values.push_back(o.value);
    e.given = e.given || o.given;
    e.flag = o.value.empty();
  }
  std::set<std::string> names(std::begin(kShaping), std::end(kShaping));
  for (const auto& [n, e] : saved) names.insert(n);
  for (const auto& name : names) {
    const Entry model_entry = saved.count(name) ? saved.at(name) : Entry{};
    const auto it = m.find(name);
    if (it != m.end() && it->second.given) {
      const Entry& cmd = it->second;
      auto a = cmd.values, b = model_entry.values;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a == b) continue;
      if (kOverridable.count(name)) {
        warnings.push_back("[warning] " + show(name, cmd) + " overrides the model's " + show(name, model_entry) +
                           " (" + path + ")");
        continue;
      }
      throw ConfigError(show(name, cmd) + " conflicts with the model's " + show(name, model_entry) + " (" + path +
                        "); leave it out to use the model's");
    }
    if (model_entry.values.empty()) continue;  // the model has no value: the command line's default stands
    m[name] = model_entry;
  }
}

void chars_to_table(const std::vector<std::string>& specs, std::array<bool, 256>& table) {
  for (const auto& s : specs)
    for (unsigned char c : s) table[c] = true;
}

template <typename T>
T to_number(const std::string& name, const std::string& text) {
  std::istringstream in(text);
  T v{};
  in >> v;
  if (text.empty() || in.fail() || !in.eof())
    throw ConfigError("--" + name + " expects a number, got '" + text + "'");
  return v;
}

}  // namespace

Config parse_command_line(int argc, const char* const argv[]) {
  reject_missing(argc, argv);
  Config c;
  using S = std::string;
  using V = std::vector<std::string>;

  po::options_description input("Input");
  input.add_options()
      ("data,d", po::value<S>(), "data file, plain or gzip (default: stdin)")
      ("format", po::value<S>()->default_value("vw"), "input format: vw | libsvm | csv | tsv")
      ("libsvm_namespace", po::value<S>()->default_value("f"), "namespace of libsvm features")
      ("positive_label", po::value<S>(), "this label (compared as text) becomes 1, every other label -1")
      ("examples", po::value<S>(), "stop after this many examples (default: all)")
      ("strict_parse", po::bool_switch(), "the first malformed input line is an error (exit 1)")
      ("max_line_bytes", po::value<S>()->default_value("256M"), "longest line read (K, M, G suffixes); longer is an error");

  po::options_description tables("CSV and TSV tables");
  tables.add_options()
      ("no_header", po::bool_switch(), "the first row is data; columns are named by 0-based position")
      ("label_column", po::value<S>()->default_value("0"), "label column: NAME or INDEX (negative: from the end)")
      ("ignore_columns", po::value<V>()->composing(), "columns to drop (NAMEs or INDEXes, comma-separated)")
      ("categorical", po::value<V>()->composing(), "numeric-looking columns read as strings (ids, codes)")
      ("text_columns", po::value<V>()->composing(), "free-text columns, split into lower-cased words")
      ("csv_namespace", po::value<S>()->default_value("c"), "namespace of the table's features")
      ("text_namespace", po::value<S>(), "namespace of text words (default: each column name's first letter)");

  po::options_description features("Feature space");
  features.add_options()
      ("bit_precision,b", po::value<S>()->default_value("18"), "number of weight-table bits: 2^b slots")
      ("hash", po::value<S>()->default_value("strings"), "feature hashing: strings | all")
      ("hash_seed", po::value<S>()->default_value("0"), "seed of the feature hash")
      ("quadratic,q", po::value<V>()->composing(), "quadratic interaction ab (':' = any namespace)")
      ("cubic", po::value<V>()->composing(), "cubic interaction abc")
      ("interactions", po::value<V>()->composing(), "interaction of any order")
      ("permutations", po::bool_switch(), "all orderings of equal adjacent interaction terms")
      ("leave_duplicate_interactions", po::bool_switch(), "keep interactions that repeat another")
      ("ignore", po::value<V>()->composing(), "drop namespaces with these first letters")
      ("ignore_linear", po::value<V>()->composing(), "drop these namespaces' linear terms (they still interact)")
      ("keep", po::value<V>()->composing(), "drop every namespace not listed")
      ("noconstant", po::bool_switch(), "no constant (bias) feature");

  po::options_description loss("Loss and output link");
  loss.add_options()
      ("loss_function", po::value<S>()->default_value("squared"), "squared | logistic | hinge | quantile")
      ("quantile_tau", po::value<S>()->default_value("0.5"), "quantile level of the quantile loss")
      ("link", po::value<S>()->default_value("identity"), "printed prediction: identity | logistic | glf1 | poisson")
      ("binary", po::bool_switch(), "print predictions as -1/1 and report 0/1 loss");

  po::options_description learner("Learner");
  learner.add_options()("learner", po::value<S>()->default_value("sgd"),
                        "learning algorithm (`--learner help` lists them)");

  po::options_description passes("Passes, cache and holdout");
  passes.add_options()
      ("passes", po::value<S>()->default_value("1"), "passes over the data (holdout is on when > 1)")
      ("cache,c", po::bool_switch(), "cache parsed examples in DATA.cache (reused when it matches)")
      ("cache_file", po::value<S>(), "cache parsed examples in this file")
      ("kill_cache,k", po::bool_switch(), "rebuild the cache even when it matches")
      ("holdout_off", po::bool_switch(), "no holdout: learn from every example in every pass")
      ("holdout_period", po::value<S>()->default_value("10"), "every Nth line is held out")
      ("holdout_after", po::value<S>(), "lines after this one are held out (instead of every Nth)")
      ("early_terminate", po::value<S>()->default_value("3"), "stop after this many passes without holdout gain")
      ("threads", po::value<S>()->default_value("0"), "parser threads (0 = all cores); results do not depend on it");

  po::options_description model("Model files");
  model.add_options()
      ("final_regressor,f", po::value<S>(), "save the final model here (atomically)")
      ("initial_regressor,i", po::value<S>(), "start from this model; its saved options apply")
      ("readable_model", po::value<S>(), "write the weights as text: index:weight [other per-slot state]")
      ("testonly,t", po::bool_switch(), "predict only, never learn");

  po::options_description output("Output");
  output.add_options()
      ("help,h", "this help")
      ("predictions,p", po::value<S>(), "write predictions here (/dev/stdout for stdout)")
      ("raw_predictions,r", po::value<S>(), "write raw scores (before clipping and link) here")
      ("quiet", po::bool_switch(), "nothing on stderr")
      ("progress,P", po::value<S>(), "progress rows every N examples (integer) or at a growing factor (x.y); "
                                    "default factor 2");

  po::options_description all("lepus: online learning from the shell, VW-compatible");
  all.add(input).add(tables).add(features).add(loss).add(learner);
  // A learner family may share an option (--ftprl_radius): it is declared once, under the first row that has it,
  // and its help names every learner that takes it.
  std::map<std::string, std::vector<std::string>> option_rows;
  for (const auto& row : learner_registry())
    for (const auto& s : row.options) option_rows[s.name].push_back(row.name);
  std::set<std::string> declared;
  for (const auto& row : learner_registry()) {
    po::options_description g("Learner '" + row.name + "' options");
    for (const auto& s : row.options) {
      if (!declared.insert(s.name).second) continue;
      const std::string n = s.short_name.empty() ? s.name : s.name + "," + s.short_name;
      std::string help = s.help;
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
  all.add(passes).add(model).add(output);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see lepus --help)");
  }
  if (vm.count("help")) {
    std::ostringstream s;
    s << all;
    c.show_help = true;
    c.help_text = s.str();
    return c;
  }
  if (vm["learner"].as<S>() == "help") {
    c.list_learners = true;
    return c;
  }

  OptionMap m = from_variables(vm);
  auto given = [&](const std::string& n) { return m.count(n) && m.at(n).given; };
  auto text = [&](const std::string& n) -> std::string {
    return m.count(n) && !m.at(n).values.empty() ? m.at(n).values.back() : std::string();
  };
  auto flag = [&](const std::string& n) { return m.count(n) && m.at(n).flag && !m.at(n).values.empty(); };
  auto list = [&](const std::string& n) { return m.count(n) ? m.at(n).values : V{}; };

  // Model files; an -i model's options are merged before anything else is read from the map.
  c.final_regressor = text("final_regressor");
  c.initial_regressor = text("initial_regressor");
  c.readable_model = text("readable_model");
  if (!c.initial_regressor.empty()) {
    c.model = read_model_file(c.initial_regressor);
    merge_model(m, *c.model, c.initial_regressor, c.warnings);
  }

  // Learner and its own options; another learner's options are an error, never ignored.
  c.learner = text("learner");
  const LearnerRow* row = find_learner(c.learner);
  if (!row) throw ConfigError("unknown --learner '" + c.learner + "' (see lepus --learner help)");
  std::set<std::string> own;
  for (const auto& spec : row->options) own.insert(spec.name);
  for (const auto& other : learner_registry()) {
    for (const auto& spec : other.options) {
      if (!own.count(spec.name) && given(spec.name))
        throw ConfigError("--" + spec.name + " is an option of --learner " + other.name + ", not of --learner " +
                          row->name);
    }
  }
  for (const auto& spec : row->options) {
    const bool explicit_value = m.count(spec.name) && !m.at(spec.name).defaulted && !m.at(spec.name).values.empty();
    if (spec.kind == OptionSpec::Kind::kFlag) {
      if (flag(spec.name)) c.learner_options.set(spec.name, "1", given(spec.name));
    } else if (explicit_value) {  // given, or restored from an -i model
      c.learner_options.set(spec.name, text(spec.name), given(spec.name));
    } else if (!spec.default_value.empty()) {  // this row's own default (a shared option may differ per row)
      c.learner_options.set(spec.name, spec.default_value, false);
    }
  }

  // Input.
  c.driver.data = text("data");
  const std::string fmt = text("format");
  if (fmt == "vw") {
    c.driver.format = InputFormat::kVw;
  } else if (fmt == "libsvm" || fmt == "svmlight") {
    c.driver.format = InputFormat::kLibsvm;
  } else if (fmt == "csv" || fmt == "tsv") {
    c.driver.format = InputFormat::kCsv;
    c.driver.csv.delimiter = fmt == "csv" ? ',' : '\t';
    c.driver.csv.quoted = fmt == "csv";
  } else {
    throw ConfigError("unknown --format '" + fmt + "' (choose vw, libsvm, csv or tsv)");
  }
  auto columns = [&](const std::string& n) {  // repeated and comma-separated lists
    std::vector<std::string> out;
    for (const auto& v : list(n)) {
      size_t start = 0;
      for (;;) {
        const size_t comma = v.find(',', start);
        const std::string part = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!part.empty()) out.push_back(part);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    return out;
  };
  c.driver.csv.header = !flag("no_header");
  c.driver.csv.label_column = text("label_column");
  c.driver.csv.ignore_columns = columns("ignore_columns");
  c.driver.csv.categorical = columns("categorical");
  c.driver.csv.text_columns = columns("text_columns");
  c.driver.csv.csv_namespace = text("csv_namespace");
  c.driver.csv.text_namespace = text("text_namespace");
  if (c.driver.csv.csv_namespace.empty()) throw ConfigError("--csv_namespace must not be empty");
  c.driver.parse.libsvm_namespace = text("libsvm_namespace");
  if (c.driver.parse.libsvm_namespace.empty()) throw ConfigError("--libsvm_namespace must not be empty");
  if (!list("positive_label").empty()) {
    c.driver.parse.positive_label = text("positive_label");
    c.driver.parse.has_positive_label = true;
  }
  if (given("examples")) c.driver.max_examples = to_number<uint64_t>("examples", text("examples"));
  c.driver.strict_parse = flag("strict_parse");
  {
    std::string t = text("max_line_bytes");
    uint64_t unit = 1;
    if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G')) {
      unit = t.back() == 'K' ? 1ull << 10 : t.back() == 'M' ? 1ull << 20 : 1ull << 30;
      t.pop_back();
    }
    const uint64_t n = to_number<uint64_t>("max_line_bytes", t);
    if (n == 0 || n > (uint64_t{1} << 40) / unit) throw ConfigError("--max_line_bytes must be between 1 and 1T");
    c.driver.max_line_bytes = static_cast<size_t>(n * unit);
  }

  // Feature space.
  c.bits = to_number<int>("bit_precision", text("bit_precision"));
  if (c.bits < 1 || c.bits > 30) throw ConfigError("-b must be between 1 and 30, got " + std::to_string(c.bits));
  const std::string hash = text("hash");
  if (hash == "strings") {
    c.driver.parse.hash_mode = HashMode::kStrings;
  } else if (hash == "all") {
    c.driver.parse.hash_mode = HashMode::kAll;
  } else {
    throw ConfigError("unknown --hash '" + hash + "' (choose strings or all)");
  }
  c.driver.parse.hash_seed = to_number<uint32_t>("hash_seed", text("hash_seed"));
  c.space.quadratic = list("quadratic");
  c.space.cubic = list("cubic");
  c.space.interactions = list("interactions");
  c.space.permutations = flag("permutations");
  c.space.leave_duplicates = flag("leave_duplicate_interactions");
  c.space.constant = !flag("noconstant");
  chars_to_table(list("ignore_linear"), c.space.ignore_linear);
  chars_to_table(list("ignore"), c.driver.parse.drop_group);
  if (!list("keep").empty()) {
    if (!list("ignore").empty()) throw ConfigError("--keep and --ignore cannot be combined");
    std::array<bool, 256> keep{};
    chars_to_table(list("keep"), keep);
    for (int i = 0; i < 256; ++i) c.driver.parse.drop_group[i] = !keep[i];
  }

  // Loss and link.
  c.loss.name = text("loss_function");
  c.loss.quantile_tau = to_number<float>("quantile_tau", text("quantile_tau"));
  c.driver.link = parse_link(text("link"));
  c.driver.binary = flag("binary");

  // Output.
  c.driver.predictions = text("predictions");
  c.driver.raw_predictions = text("raw_predictions");
  c.driver.test_only = flag("testonly");
  c.quiet = flag("quiet");
  if (!list("progress").empty()) {
    const std::string p = text("progress");
    char* end = nullptr;
    const double v = std::strtod(p.c_str(), &end);
    if (p.empty() || *end != '\0' || !(v > 0.0)) throw ConfigError("--progress expects a positive number");
    c.driver.progress = v;
    c.driver.progress_additive = p.find('.') == std::string::npos;
    if (!c.driver.progress_additive && v <= 1.0) throw ConfigError("--progress factor must be > 1");
  }
  // Passes, cache, holdout, threads.
  c.driver.passes = to_number<int>("passes", text("passes"));
  if (c.driver.passes < 1) throw ConfigError("--passes must be at least 1");
  if (!text("cache_file").empty()) {
    c.driver.cache_file = text("cache_file");
  } else if (flag("cache")) {
    if (c.driver.data.empty())
      throw ConfigError("-c with stdin input needs --cache_file FILE (there is no data file name to extend)");
    c.driver.cache_file = c.driver.data + ".cache";
  }
  c.driver.kill_cache = flag("kill_cache") || (c.driver.data.empty() && !c.driver.cache_file.empty());
  if (c.driver.passes > 1 && c.driver.data.empty() && c.driver.cache_file.empty())
    throw ConfigError("--passes " + text("passes") + " reads stdin more than once: add --cache_file FILE");
  c.driver.holdout_off = flag("holdout_off");
  c.driver.holdout_period = to_number<uint64_t>("holdout_period", text("holdout_period"));
  if (c.driver.holdout_period < 1) throw ConfigError("--holdout_period must be at least 1");
  if (given("holdout_after")) {
    c.driver.holdout_after = to_number<uint64_t>("holdout_after", text("holdout_after"));
    if (c.driver.holdout_after < 1) throw ConfigError("--holdout_after must be at least 1");
  }
  c.driver.early_terminate = to_number<int>("early_terminate", text("early_terminate"));
  if (c.driver.early_terminate < 1) throw ConfigError("--early_terminate must be at least 1");
  c.driver.threads = to_number<int>("threads", text("threads"));
  if (c.driver.threads < 0 || c.driver.threads > 1024) throw ConfigError("--threads must be between 0 and 1024");
  {
    std::string fp = "format=" + fmt + ";hash=" + hash + ";seed=" + text("hash_seed") +
                     ";libsvm_namespace=" + c.driver.parse.libsvm_namespace + ";positive_label=" +
                     (c.driver.parse.has_positive_label ? "1:" + c.driver.parse.positive_label : "0") + ";drop=";
    for (int i = 0; i < 256; ++i) fp += c.driver.parse.drop_group[i] ? '1' : '0';
    if (c.driver.format == InputFormat::kCsv) {
      const CsvOptions& o = c.driver.csv;
      fp += std::string(";csv=") + o.delimiter + (o.header ? "h" : "n") + ";label=" + o.label_column +
            ";ns=" + o.csv_namespace + ";textns=" + o.text_namespace;
      for (const auto* l : {&o.ignore_columns, &o.categorical, &o.text_columns}) {
        fp += ";";
        for (const auto& x : *l) fp += x + ",";
      }
    }
    c.driver.parse_fingerprint = fp;
  }
  if (!c.driver.cache_file.empty() && c.driver.cache_file == c.driver.data)
    throw ConfigError("--cache_file " + c.driver.cache_file + " would overwrite the data file");

  if (!c.final_regressor.empty() && c.final_regressor == c.driver.data)
    throw ConfigError("-f " + c.final_regressor + " would overwrite the data file");

  // What a saved model records: every shaping option in force, and the learner's own options.
  for (const char* n : kShaping) {
    if (!m.count(n)) continue;
    for (const auto& v : m.at(n).values) c.saved_options.push_back(SavedOption{n, v, m.at(n).given});
  }
  for (const auto& spec : row->options) {
    if (!c.learner_options.has(spec.name)) continue;
    const bool flag_option = spec.kind == OptionSpec::Kind::kFlag;
    c.saved_options.push_back(SavedOption{spec.name, flag_option ? "" : c.learner_options.text(spec.name),
                                          c.learner_options.given(spec.name)});
  }
  return c;
}

}  // namespace lepus::cli
