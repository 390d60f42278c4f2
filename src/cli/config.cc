// Option table and checks. Every option has a documented default that works without tuning.
#include "cli/config.h"

#include <boost/program_options.hpp>
#include <cstring>
#include <map>
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
// Options lepus will have but this build does not yet.
const char* const kNotYet[] = {"passes", "cache", "cache_file", "kill_cache", "holdout_off", "holdout_period",
                               "holdout_after", "early_terminate", "decay_learning_rate", "final_regressor",
                               "initial_regressor", "readable_model", "save_resume", "threads"};
const std::map<std::string, std::string> kShortToLong = {{"c", "cache"}, {"k", "kill_cache"},
                                                         {"f", "final_regressor"}, {"i", "initial_regressor"}};

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
    for (const char* n : kNotYet)
      if (name == n) throw ConfigError("--" + name + " is not supported by this lepus build yet");
  }
}

std::string name_with_short(const OptionSpec& s) {
  return s.short_name.empty() ? s.name : s.name + "," + s.short_name;
}

void chars_to_table(const std::vector<std::string>& specs, std::array<bool, 256>& table) {
  for (const auto& s : specs)
    for (unsigned char c : s) table[c] = true;
}

}  // namespace

Config parse_command_line(int argc, const char* const argv[]) {
  reject_missing(argc, argv);
  Config c;

  po::options_description input("Input");
  input.add_options()
      ("data,d", po::value<std::string>(), "data file, plain or gzip (default: stdin)")
      ("format", po::value<std::string>()->default_value("vw"), "input format: vw | libsvm")
      ("libsvm_namespace", po::value<std::string>()->default_value("f"), "namespace of libsvm features")
      ("examples", po::value<uint64_t>(), "stop after this many examples (default: all)")
      ("strict_parse", po::bool_switch(), "the first malformed input line is an error (exit 1)");

  po::options_description features("Feature space");
  features.add_options()
      ("bit_precision,b", po::value<int>()->default_value(18), "number of weight-table bits: 2^b slots")
      ("hash", po::value<std::string>()->default_value("strings"), "feature hashing: strings | all")
      ("hash_seed", po::value<uint32_t>()->default_value(0), "seed of the feature hash")
      ("quadratic,q", po::value<std::vector<std::string>>()->composing(), "quadratic interaction ab (':' = any)")
      ("cubic", po::value<std::vector<std::string>>()->composing(), "cubic interaction abc")
      ("interactions", po::value<std::vector<std::string>>()->composing(), "interaction of any order")
      ("permutations", po::bool_switch(), "all orderings of equal adjacent interaction terms")
      ("leave_duplicate_interactions", po::bool_switch(), "keep interactions that repeat another")
      ("ignore", po::value<std::vector<std::string>>()->composing(), "drop namespaces with these first letters")
      ("ignore_linear", po::value<std::vector<std::string>>()->composing(),
       "drop these namespaces' linear terms (they still feed interactions)")
      ("keep", po::value<std::vector<std::string>>()->composing(), "drop every namespace not listed")
      ("noconstant", po::bool_switch(), "no constant (bias) feature");

  po::options_description loss("Loss and output link");
  loss.add_options()
      ("loss_function", po::value<std::string>()->default_value("squared"),
       "squared | logistic | hinge | quantile")
      ("quantile_tau", po::value<float>()->default_value(0.5f), "quantile level of the quantile loss")
      ("link", po::value<std::string>()->default_value("identity"),
       "printed prediction: identity | logistic | glf1 | poisson")
      ("binary", po::bool_switch(), "print predictions as -1/1 and report 0/1 loss");

  po::options_description learner("Learner");
  learner.add_options()("learner", po::value<std::string>()->default_value("sgd"),
                        "learning algorithm (`--learner help` lists them)");

  po::options_description output("Output");
  output.add_options()
      ("help,h", "this help")
      ("predictions,p", po::value<std::string>(), "write predictions here (/dev/stdout for stdout)")
      ("raw_predictions,r", po::value<std::string>(), "write raw scores (before clipping and link) here")
      ("testonly,t", po::bool_switch(), "predict only, never learn")
      ("quiet", po::bool_switch(), "nothing on stderr")
      ("progress,P", po::value<std::string>(),
       "progress rows: every N examples (integer) or at a growing factor (x.y); default factor 2");

  po::options_description all("lepus: online learning from the shell, VW-compatible");
  all.add(input).add(features).add(loss).add(learner);
  std::vector<po::options_description> learner_groups;
  for (const auto& row : learner_registry()) {
    po::options_description g("Learner '" + row.name + "' options");
    for (const auto& s : row.options) {
      if (s.kind == OptionSpec::Kind::kFlag) {
        g.add_options()(name_with_short(s).c_str(), po::bool_switch(), s.help.c_str());
      } else if (!s.default_value.empty()) {
        g.add_options()(name_with_short(s).c_str(), po::value<std::string>()->default_value(s.default_value),
                        s.help.c_str());
      } else {
        g.add_options()(name_with_short(s).c_str(), po::value<std::string>(), s.help.c_str());
      }
    }
    all.add(g);
  }
  all.add(output);

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

  // Learner and its own options; another learner's options are an error, never ignored.
  c.learner = vm["learner"].as<std::string>();
  if (c.learner == "help") {
    c.list_learners = true;
    return c;
  }
  const LearnerRow* row = find_learner(c.learner);
  if (!row) throw ConfigError("unknown --learner '" + c.learner + "' (see lepus --learner help)");
  for (const auto& other : learner_registry()) {
    for (const auto& s : other.options) {
      const bool given = vm.count(s.name) && !vm[s.name].defaulted() &&
                         (s.kind != OptionSpec::Kind::kFlag || vm[s.name].as<bool>());
      if (&other != row) {
        if (given)
          throw ConfigError("--" + s.name + " is an option of --learner " + other.name + ", not of --learner " +
                            row->name);
        continue;
      }
      if (s.kind == OptionSpec::Kind::kFlag) {
        if (given) c.learner_options.set(s.name, "1", true);
      } else if (vm.count(s.name)) {
        c.learner_options.set(s.name, vm[s.name].as<std::string>(), given);
      }
    }
  }

  // Input.
  if (vm.count("data")) c.driver.data = vm["data"].as<std::string>();
  const std::string fmt = vm["format"].as<std::string>();
  if (fmt == "vw") {
    c.driver.format = InputFormat::kVw;
  } else if (fmt == "libsvm" || fmt == "svmlight") {
    c.driver.format = InputFormat::kLibsvm;
  } else {
    throw ConfigError("unknown --format '" + fmt + "' (choose vw or libsvm)");
  }
  c.driver.parse.libsvm_namespace = vm["libsvm_namespace"].as<std::string>();
  if (c.driver.parse.libsvm_namespace.empty()) throw ConfigError("--libsvm_namespace must not be empty");
  if (vm.count("examples")) c.driver.max_examples = vm["examples"].as<uint64_t>();
  c.driver.strict_parse = vm["strict_parse"].as<bool>();

  // Feature space.
  c.bits = vm["bit_precision"].as<int>();
  if (c.bits < 1 || c.bits > 30) throw ConfigError("-b must be between 1 and 30, got " + std::to_string(c.bits));
  const std::string hash = vm["hash"].as<std::string>();
  if (hash == "strings") {
    c.driver.parse.hash_mode = HashMode::kStrings;
  } else if (hash == "all") {
    c.driver.parse.hash_mode = HashMode::kAll;
  } else {
    throw ConfigError("unknown --hash '" + hash + "' (choose strings or all)");
  }
  c.driver.parse.hash_seed = vm["hash_seed"].as<uint32_t>();
  auto list = [&](const char* n) {
    return vm.count(n) ? vm[n].as<std::vector<std::string>>() : std::vector<std::string>{};
  };
  c.space.quadratic = list("quadratic");
  c.space.cubic = list("cubic");
  c.space.interactions = list("interactions");
  c.space.permutations = vm["permutations"].as<bool>();
  c.space.leave_duplicates = vm["leave_duplicate_interactions"].as<bool>();
  c.space.constant = !vm["noconstant"].as<bool>();
  chars_to_table(list("ignore_linear"), c.space.ignore_linear);
  chars_to_table(list("ignore"), c.driver.parse.drop_group);
  if (vm.count("keep")) {
    if (vm.count("ignore")) throw ConfigError("--keep and --ignore cannot be combined");
    std::array<bool, 256> keep{};
    chars_to_table(list("keep"), keep);
    for (int i = 0; i < 256; ++i) c.driver.parse.drop_group[i] = !keep[i];
  }

  // Loss and link.
  c.loss.name = vm["loss_function"].as<std::string>();
  c.loss.quantile_tau = vm["quantile_tau"].as<float>();
  c.driver.link = parse_link(vm["link"].as<std::string>());
  c.driver.binary = vm["binary"].as<bool>();

  // Output.
  if (vm.count("predictions")) c.driver.predictions = vm["predictions"].as<std::string>();
  if (vm.count("raw_predictions")) c.driver.raw_predictions = vm["raw_predictions"].as<std::string>();
  c.driver.test_only = vm["testonly"].as<bool>();
  c.quiet = vm["quiet"].as<bool>();
  if (vm.count("progress")) {
    const std::string p = vm["progress"].as<std::string>();
    char* end = nullptr;
    const double v = std::strtod(p.c_str(), &end);
    if (p.empty() || *end != '\0' || !(v > 0.0)) throw ConfigError("--progress expects a positive number");
    c.driver.progress = v;
    c.driver.progress_additive = p.find('.') == std::string::npos;
    if (!c.driver.progress_additive && v <= 1.0) throw ConfigError("--progress factor must be > 1");
  }
  return c;
}

}  // namespace lepus::cli
