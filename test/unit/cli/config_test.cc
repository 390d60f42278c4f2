// The command line as VW users' fingers and scripts write it: bare words are data, whole option names only,
// every VW option answered, VW's script flags accepted with VW's meaning.
#include "cli/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli/vw_options.h"
#include "lepus/errors.h"
#include "lepus/options.h"

namespace lepus::cli {
namespace {

Config parse(std::vector<std::string> args) {
  args.insert(args.begin(), "lepus");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// The message of the error parse() throws, "" when it does not throw.
std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// --help with every run of whitespace as one space: the text wraps at 80 columns wherever the longest option puts
// its description column.
std::string help_words() {
  std::string help;
  for (char ch : parse({"--help"}).help_text) {
    const bool space = ch == ' ' || ch == '\n';
    if (!(space && !help.empty() && help.back() == ' ')) help += space ? ' ' : ch;
  }
  return help;
}

TEST(VwOptionTable, HoldsVwsOptions) {
  const auto& all = vw_options();
  EXPECT_GT(all.size(), 400u);
  for (const char* name : {"oaa", "cb_explore_adf", "passes", "ftrl", "daemon", "invert_hash", "csv_ns_value",
                           "ring_size", "bit_precision", "save_resume", "random_seed"})
    EXPECT_NE(find_vw_option(name), nullptr) << name;
  ASSERT_NE(find_vw_short_option("a"), nullptr);
  EXPECT_STREQ(find_vw_short_option("a")->name, "audit");
}

// No VW option ever reaches the generic "unknown option": lepus implements it, or answers it in one line.
TEST(VwOptionTable, EveryVwOptionIsAnswered) {
  size_t implemented = 0, answered = 0;
  for (const VwOption& o : vw_options()) {
    std::vector<std::string> args = {std::string("--") + o.name};
    if (o.takes_value) args.push_back("1");
    const std::string err = error_of(args);
    EXPECT_FALSE(contains(err, "unknown option") || contains(err, "unrecognised")) << o.name << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << o.name << ": " << err;
    if (contains(err, std::string("--") + o.name + " ") &&
        (contains(err, "not in lepus") || contains(err, "does not implement")))
      ++answered;
    else
      ++implemented;
    if (o.short_name[0] != '\0') {
      std::vector<std::string> s = {std::string("-") + o.short_name};
      if (o.takes_value) s.push_back("1");
      const std::string e = error_of(s);
      EXPECT_FALSE(contains(e, "unknown option")) << "-" << o.short_name << ": " << e;
    }
  }
  EXPECT_GT(implemented, 50u);
  EXPECT_GT(answered, 300u);
}

TEST(VwOptionTable, ListedByVwOptions) {
  const Config c = parse({"--vw_options"});
  ASSERT_TRUE(c.show_help);
  EXPECT_TRUE(contains(c.help_text, "--passes\timplemented\n"));
  EXPECT_TRUE(contains(c.help_text, "--bit_precision (-b)\timplemented\n"));
  EXPECT_TRUE(contains(c.help_text, "--ring_size\taccepted: "));
  EXPECT_TRUE(contains(c.help_text, "--oaa\timplemented\n"));
  EXPECT_TRUE(contains(c.help_text, "--csoaa\timplemented\n"));
  size_t lines = 0;
  for (char ch : c.help_text) lines += ch == '\n';
  EXPECT_EQ(lines, vw_options().size());
}

TEST(VwOptionTable, AnswersNameNoFalseEquivalent) {
  EXPECT_TRUE(contains(error_of({"--bfgs"}), "batch L-BFGS optimizer) is not in lepus"));
  EXPECT_FALSE(contains(error_of({"--bfgs"}), "--learner sgd"));
  EXPECT_TRUE(contains(error_of({"--freegrad"}), "FreeGrad optimizer) is not in lepus"));
  EXPECT_TRUE(contains(error_of({"--cb_explore_adf"}), "which lepus does not implement"));
  EXPECT_TRUE(contains(error_of({"-C", "1"}), "-C/--constant"));
}

// VW's --rank is its matrix factorization (issue 43 items 10 and 13): with a learner that has no sketch it is
// answered as VW's, not as "an option of --learner aioli"; --vw_options lists it as not in lepus; the
// sketch's rank is --sketch_rank, and --rank still where the learner has a sketch.
TEST(VwOptionTable, VwsRankIsMatrixFactorization) {
  const std::string e = error_of({"--rank", "10", "-q", "ff"});
  EXPECT_TRUE(contains(e, "matrix factorization")) << e;
  EXPECT_TRUE(contains(e, "--sketch_rank")) << e;
  EXPECT_FALSE(contains(e, "an option of --learner")) << e;
  EXPECT_TRUE(
      contains(parse({"--vw_options"}).help_text, "--rank\tnot in lepus: VW's --rank (its low-rank matrix"));
  for (const std::vector<std::string>& a : {std::vector<std::string>{"--sketch_rank", "7"},
                                            {"--rank", "7"},
                                            {"--rank", "7", "--sketch_rank", "7"}}) {
    std::vector<std::string> args = {"--learner", "aioli", "--matrix", "sketch"};
    args.insert(args.end(), a.begin(), a.end());
    const Config c = parse(args);
    EXPECT_EQ(c.learner_options.text("rank"), "7");
  }
  EXPECT_TRUE(contains(error_of({"--sketch_rank", "7"}), "keeps none"));
  EXPECT_TRUE(contains(error_of({"--learner", "aioli", "--rank", "4", "--sketch_rank", "5"}), "disagree"));
}

TEST(VwOptionTable, HarmlessKnobsAreAcceptedWithANote) {
  const Config c = parse({"--ring_size", "1024", "--example_queue_limit=64", "x.vw"});
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_TRUE(contains(c.warnings[0], "--ring_size has no effect"));
  EXPECT_EQ(c.driver.data, std::vector<std::string>{"x.vw"});  // the knob's value is not a data file
}

TEST(CommandLine, WholeOptionNamesOnly) {
  // --decay is VW's marginal reduction's option, no longer a silent --decay_learning_rate.
  EXPECT_TRUE(contains(error_of({"--decay", "0.5"}), "--decay is an option of VW's marginal reduction"));
  EXPECT_EQ(error_of({"--decay_learn", "0.5"}),
            "unknown option --decay_learn; did you mean --decay_learning_rate?");
  EXPECT_EQ(error_of({"--pases", "3"}), "unknown option --pases; did you mean --passes?");
  EXPECT_EQ(error_of({"--lerning_rate", "3"}),
            "unknown option --lerning_rate; did you mean --learning_rate?");
  EXPECT_TRUE(contains(error_of({"--zzzzzzzz"}), "unknown option --zzzzzzzz (see lepus --help)"));
  EXPECT_TRUE(contains(error_of({"-x"}), "unknown option -x"));
  EXPECT_TRUE(contains(error_of({"--csv_names", "c"}), "unknown option"));  // never --csv_namespace
}

TEST(CommandLine, BareWordsAreDataFiles) {
  EXPECT_EQ(parse({"a.vw"}).driver.data, std::vector<std::string>{"a.vw"});
  EXPECT_EQ(parse({"a.vw", "-b", "20", "b.vw.gz"}).driver.data,
            (std::vector<std::string>{"a.vw", "b.vw.gz"}));
  EXPECT_EQ(parse({"-d", "a.vw"}).driver.data, std::vector<std::string>{"a.vw"});
  EXPECT_TRUE(parse({}).driver.data.empty());
  EXPECT_TRUE(parse({"-d", "-"}).driver.data.empty());  // stdin
  EXPECT_TRUE(parse({"-"}).driver.data.empty());
  const std::string both = error_of({"-d", "a.vw", "b.vw"});
  EXPECT_TRUE(contains(both, "-d a.vw") && contains(both, "b.vw")) << both;
  EXPECT_EQ(parse({"--", "-weird.vw"}).driver.data, std::vector<std::string>{"-weird.vw"});
}

TEST(CommandLine, CacheOfSeveralFilesIsNamedAfterTheFirst) {
  EXPECT_EQ(parse({"a.vw", "b.vw", "-c"}).driver.cache_file, "a.vw.cache");
}

TEST(CommandLine, ProgressAsVwReadsIt) {
  Config c = parse({"-P", "100"});
  EXPECT_TRUE(c.driver.progress_additive);
  EXPECT_EQ(c.driver.progress, 100.0);
  c = parse({"-P", "0.5"});
  EXPECT_FALSE(c.driver.progress_additive);
  EXPECT_DOUBLE_EQ(c.driver.progress, 1.5);
  ASSERT_EQ(c.warnings.size(), 1u);
  c = parse({"-P", "0"});
  EXPECT_TRUE(c.driver.progress_additive);
  EXPECT_EQ(c.driver.progress, 1.0);
  EXPECT_EQ(c.warnings.size(), 1u);
  c = parse({"--progress", "3.0"});
  EXPECT_DOUBLE_EQ(c.driver.progress, 3.0);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_FALSE(error_of({"-P", "often"}).empty());
}

TEST(CommandLine, ScriptFlags) {
  EXPECT_EQ(parse({"--onethread"}).driver.threads, 1);
  EXPECT_FALSE(error_of({"--onethread", "--threads", "2"}).empty());
  EXPECT_TRUE(parse({"--no_stdin"}).driver.no_input);
  EXPECT_FALSE(parse({"--no_stdin", "a.vw"}).driver.no_input);
  EXPECT_TRUE(parse({"--compressed", "-c", "a.vw"}).driver.compressed_cache);
  const Config r = parse({"--save_resume"});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_TRUE(contains(r.warnings[0], "always"));
  EXPECT_TRUE(parse({"--version"}).show_version);
  EXPECT_TRUE(parse({"-f", "m", "--save_per_pass"}).save_per_pass);
  EXPECT_FALSE(error_of({"--save_per_pass"}).empty());
  const Config p = parse({"-f", "m", "--predict_only_model"});
  EXPECT_TRUE(p.predict_only_model);
  bool recorded = false;
  for (const auto& o : p.saved_options) recorded |= o.name == "predict_only_model";
  EXPECT_TRUE(recorded);
}

TEST(CommandLine, RandomSeedIsParsedAndSaved) {
  const Config c = parse({"--random_seed", "42"});
  EXPECT_EQ(c.random_seed, 42u);
  bool saved = false;
  for (const auto& o : c.saved_options) saved |= o.name == "random_seed" && o.value == "42";
  EXPECT_TRUE(saved);
  EXPECT_FALSE(error_of({"--random_seed", "x"}).empty());
}

TEST(CommandLine, VwCsvFlags) {
  Config c = parse({"--csv", "t.csv"});
  EXPECT_EQ(c.driver.format, InputFormat::kCsv);
  EXPECT_EQ(c.driver.csv.label_column, "_label");
  EXPECT_EQ(c.driver.csv.csv_namespace, "");
  EXPECT_TRUE(c.driver.csv.vw_strings);
  EXPECT_EQ(c.driver.csv.delimiter, ',');
  c = parse({"--csv", "--csv_separator", ";", "--csv_no_file_header", "--csv_header", "_label,a,b"});
  EXPECT_EQ(c.driver.csv.delimiter, ';');
  EXPECT_FALSE(c.driver.csv.header);
  EXPECT_EQ(c.driver.csv.header_text, "_label;a;b");  // VW separates the names with commas
  EXPECT_EQ(parse({"--csv", "--csv_separator", "\\t"}).driver.csv.delimiter, '\t');
  EXPECT_TRUE(contains(error_of({"--csv", "--csv_no_file_header"}), "--csv_header"));
  EXPECT_TRUE(contains(error_of({"--csv", "--csv_separator", "|"}), "one character"));
  EXPECT_TRUE(contains(error_of({"--csv_separator", ";"}), "add --csv"));
  EXPECT_TRUE(contains(error_of({"--csv", "--format", "libsvm"}), "conflicts"));
  EXPECT_TRUE(contains(error_of({"--csv_ns_value", "a:2"}), "not in lepus"));
}

// Learner options' ranges and choices are declared once in their registry rows, checked before any data is
// read and shown in --help.
TEST(CommandLine, LearnerOptionRangesAreDeclaredOnce) {
  EXPECT_EQ(error_of({"--learner", "scinol-coord", "--scinol_alpha", "1"}),
            "--scinol_alpha must be a number > 1.125, got '1'");
  EXPECT_EQ(error_of({"--learner", "nlms", "--nlms_mu", "2"}),
            "--nlms_mu must be a number in (0, 2), got '2'");
  EXPECT_EQ(error_of({"--learner", "scinol-coord", "--scinol_d", "rows"}),
            "unknown --scinol_d 'rows' (choose seen, bits, clock)");
  EXPECT_TRUE(contains(error_of({"--learning_rate", "nan"}), "--learning_rate must be a number"));
  EXPECT_TRUE(contains(error_of({"--l1", "-1"}), "--l1 must be a number >= 0"));
  EXPECT_EQ(error_of({"--learner", "nlms", "--nlms_mu", "0.5"}), "");
  const std::string help = help_words();
  EXPECT_TRUE(contains(help, "(in (0, 2))"));
  EXPECT_TRUE(contains(help, "(one of: seen bits clock)"));
}

// lepus's own options declare what they accept as the learners' do (kind, range, whole, choices): one check,
// one message, and --help shows it.
TEST(CommandLine, CoreOptionRangesAreDeclaredOnce) {
  EXPECT_EQ(error_of({"-b", "40", "--no_stdin"}),
            "--bit_precision must be a whole number in [1, 32], got '40'");
  EXPECT_EQ(error_of({"--passes", "0", "d.vw"}), "--passes must be a whole number >= 1, got '0'");
  EXPECT_EQ(error_of({"--oaa", "3", "--indexing", "2", "d.vw"}), "unknown --indexing '2' (choose 0, 1)");
  EXPECT_EQ(error_of({"--daemon", "--port", "70000"}),
            "--port must be a whole number in [0, 65535], got '70000'");
  EXPECT_EQ(error_of({"--daemon", "--idle_timeout", "0"}), "--idle_timeout must be a number > 0, got '0'");
  EXPECT_EQ(error_of({"--threads", "1025", "d.vw"}),
            "--threads must be a whole number in [0, 1024], got '1025'");
  EXPECT_EQ(error_of({"--hash_seed", "4294967296", "d.vw"}),
            "--hash_seed must be a whole number in [0, 4294967295], got '4294967296'");
  EXPECT_EQ(error_of({"--format", "xml", "d.vw"}), "unknown --format 'xml' (choose vw, libsvm, csv, tsv)");
  EXPECT_EQ(error_of({"--no_stdin"}), "");  // every default passes its own row's check
  EXPECT_EQ(parse({"-b", "32", "--hash_seed", "4294967295", "d.vw"}).bits, 32);
  const std::string help = help_words();
  EXPECT_TRUE(contains(help, "(a whole number in [1, 32])"));
  EXPECT_TRUE(contains(help, "(one of: vw libsvm csv tsv)"));
}

// A learner's losses come from its row: its default when none is given, anything else refused.
TEST(CommandLine, LearnerLossesComeFromTheRegistry) {
  EXPECT_EQ(parse({"--learner", "nlms"}).loss.name, "squared");
  EXPECT_TRUE(contains(error_of({"--learner", "nlms", "--loss_function", "hinge"}), "squared loss only"));
  EXPECT_EQ(parse({"--loss_function", "hinge"}).loss.name, "hinge");  // sgd takes every loss
}

TEST(CommandLine, HelpOpensWithUsageAndExamples) {
  const Config c = parse({"--help"});
  ASSERT_TRUE(c.show_help);
  EXPECT_EQ(c.help_text.rfind("Usage: lepus", 0), 0u);
  EXPECT_TRUE(contains(c.help_text, "Examples:"));
  const size_t general = c.help_text.find("General:");
  ASSERT_NE(general, std::string::npos);
  EXPECT_LT(c.help_text.find("--version"), c.help_text.find("Input"));
  EXPECT_FALSE(contains(c.help_text, "bare-data-file"));
  EXPECT_FALSE(contains(c.help_text, "the card"));
}

// A learner with a second-order matrix (any --matrix but diag) or a kernel store learns on a thread of its
// own; a first-order or diagonal one learns in the pipeline's last filter.
TEST(Config, LearnThreadForHeavyUpdates) {
  EXPECT_FALSE(parse({"d.vw"}).driver.learn_thread);
  EXPECT_FALSE(parse({"d.vw", "--learner", "scinol2"}).driver.learn_thread);
  EXPECT_FALSE(parse({"d.vw", "--learner", "aioli", "--matrix", "diag"}).driver.learn_thread);
  EXPECT_TRUE(parse({"d.vw", "--learner", "aioli"}).driver.learn_thread);  // auto: full, then a sketch
  EXPECT_TRUE(parse({"d.vw", "--learner", "ftprl-full", "--matrix", "sketch"}).driver.learn_thread);
  EXPECT_TRUE(parse({"d.vw", "--learner", "wemm"}).driver.learn_thread);
  EXPECT_FALSE(parse({"d.vw", "--learner", "wemm", "--matrix", "diag"}).driver.learn_thread);
  EXPECT_TRUE(parse({"d.vw", "--learner", "kons", "--budget", "100"}).driver.learn_thread);
}

// --sync_timeout (issue 43 item 8): auto by default (a stuck rank ends the job after 10 times the longest
// silence seen, at least 60 s), a number of seconds as given, 0 for no limit; anything else refused.
TEST(CommandLine, SyncTimeoutIsAutoByDefault) {
  using Mode = SyncTimeout::Mode;
  EXPECT_EQ(parse({"--distributed", "d.vw"}).sync_timeout.mode, Mode::kAuto);
  EXPECT_EQ(parse({"--distributed", "d.vw", "--sync_timeout", "auto"}).sync_timeout.mode, Mode::kAuto);
  EXPECT_EQ(parse({"--distributed", "d.vw", "--sync_timeout", "0"}).sync_timeout.mode, Mode::kNone);
  const SyncTimeout fixed = parse({"--distributed", "d.vw", "--sync_timeout", "2.5"}).sync_timeout;
  EXPECT_EQ(fixed.mode, Mode::kFixed);
  EXPECT_EQ(fixed.seconds, 2.5);
  for (const char* bad : {"-1", "abc", "2s", "inf"})
    EXPECT_TRUE(
        contains(error_of({"--distributed", "d.vw", "--sync_timeout", bad}), "--sync_timeout must be auto"))
        << bad;
  EXPECT_EQ(sync_timeout_limit(SyncTimeout{}, 0.0), 60.0);    // the floor
  EXPECT_EQ(sync_timeout_limit(SyncTimeout{}, 2.0), 60.0);    // 10 x 2 s is under it
  EXPECT_EQ(sync_timeout_limit(SyncTimeout{}, 30.0), 300.0);  // 10 x the longest silence seen
  EXPECT_EQ(sync_timeout_limit(fixed, 1000.0), 2.5);
  EXPECT_TRUE(std::isinf(sync_timeout_limit(SyncTimeout{Mode::kNone, 0.0}, 1.0)));
}

// One reading of numbers for every option: the whole text, finite, no stray suffix; counts are whole numbers.
// --idle_timeout, --sync_timeout and -P once read numbers their own ways (--idle_timeout 5x was 5 seconds).
TEST(CommandLine, EveryOptionReadsNumbersAlike) {
  EXPECT_EQ(read_number("2.5"), 2.5);
  EXPECT_EQ(read_number("1e-3"), 1e-3);
  EXPECT_EQ(read_number("-4"), -4.0);
  for (const char* bad : {"", " 1", "1 ", "5x", "inf", "nan", "1e999", "."})
    EXPECT_FALSE(read_number(bad)) << bad;
  EXPECT_EQ(read_whole<int>("+7"), 7);
  EXPECT_EQ(read_whole<int>("-7"), -7);
  for (const char* bad : {"", "+", "1e3", "2.0", "5x", " 5", "99999999999"})
    EXPECT_FALSE(read_whole<int>(bad)) << bad;
  EXPECT_FALSE(read_whole<uint64_t>("-1"));

  const std::vector<std::vector<std::string>> suffixed = {{"--passes", "5x"},
                                                          {"--holdout_period", "5x"},
                                                          {"-b", "18x"},
                                                          {"--learning_rate", "0.5x"},
                                                          {"--quantile_tau", "0.5x"},
                                                          {"-P", "2.5x"},
                                                          {"--daemon", "--idle_timeout", "5x"},
                                                          {"--daemon", "--port", "80x"}};
  for (auto args : suffixed) {
    const std::string shown = args[args.size() - 2] + " " + args.back();
    args.push_back("--no_stdin");
    EXPECT_NE(error_of(args), "") << shown;
  }
  EXPECT_TRUE(contains(error_of({"--daemon", "--idle_timeout", "5x"}), "--idle_timeout"));
  EXPECT_EQ(parse({"--daemon", "--idle_timeout", "2.5"}).serve.idle_seconds, 2.5);
  EXPECT_EQ(parse({"--passes", "+2", "d.vw"}).driver.passes, 2);
  EXPECT_NE(error_of({"--passes", "1e3", "d.vw"}), "");  // a count is a whole number, as VW reads it
}

}  // namespace
}  // namespace lepus::cli
