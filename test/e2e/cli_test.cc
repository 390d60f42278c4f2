// The command line as a VW user drives it: formats, stdin, gzip by magic, -p /dev/stdout, --examples,
// option errors.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;

TEST(Cli, LibsvmInputEqualsVwConversion) {
  const std::string d = scratch_dir("libsvm");
  ASSERT_EQ(run_lepus("--format libsvm -d " + kData + "/heart_scale.libsvm --loss_function logistic -p " + d +
                      "/a.txt --quiet"),
            0);
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --loss_function logistic -p " + d + "/b.txt --quiet"),
            0);
  const std::string a = read_file(d + "/a.txt");
  EXPECT_EQ(lines_of(a).size(), 270u);
  EXPECT_EQ(a, read_file(d + "/b.txt"));
}

// a9a read as libsvm hashes exactly like the VW-format oracle input: VW's own predictions, to 1e-3.
TEST(Cli, A9aLibsvmMatchesVwOracle) {
  const std::string data = LEPUS_SHARED_DIR "/data/a9a/a9a.gz";
  const std::string oracle = LEPUS_SHARED_DIR "/oracles/vw/a9a/01_default.pred";
  if (!exists(data) || !exists(oracle)) GTEST_SKIP() << "no ../shared";
  const std::string d = scratch_dir("a9a_libsvm");
  ASSERT_EQ(run_lepus("--format libsvm -d " + data + " --learner sgd --loss_function logistic -p " + d +
                      "/p.txt --quiet"),
            0);
  const auto m = compare_predictions(read_predictions(d + "/p.txt"), read_predictions(oracle), 1e-3);
  EXPECT_EQ(m.n, 32561u);
  EXPECT_GE(m.share(), 0.99);
}

TEST(Cli, StdinAndDevStdoutEqualFileRun) {
  const std::string d = scratch_dir("stdin");
  const std::string in = kData + "/vw/inputs/rcv1_small.vw.gz";
  ASSERT_EQ(run_lepus("-d " + in + " --loss_function logistic -p " + d + "/file.txt --quiet"), 0);
  // gzip through a pipe, recognised by its magic bytes; predictions to stdout through a pipe.
  ASSERT_EQ(
      run_lepus("--loss_function logistic -p /dev/stdout --quiet < " + in + " | cat > " + d + "/pipe.txt"),
      0);
  EXPECT_EQ(read_file(d + "/file.txt"), read_file(d + "/pipe.txt"));
  EXPECT_EQ(lines_of(read_file(d + "/pipe.txt")).size(), 1000u);
}

TEST(Cli, GzipRecognisedWhateverTheName) {
  const std::string d = scratch_dir("gzname");
  ASSERT_EQ(std::system(("cp " + kData + "/vw/inputs/abalone.vw.gz " + d + "/data.txt").c_str()), 0);
  ASSERT_EQ(run_lepus("-d " + d + "/data.txt -p " + d + "/a.txt --quiet"), 0);
  ASSERT_EQ(std::system(("gzip -dc " + d + "/data.txt > " + d + "/plain.vw").c_str()), 0);
  ASSERT_EQ(run_lepus("--data " + d + "/plain.vw --predictions " + d + "/b.txt --quiet"), 0);
  EXPECT_EQ(read_file(d + "/a.txt"), read_file(d + "/b.txt"));
  EXPECT_EQ(lines_of(read_file(d + "/a.txt")).size(), 4177u);
}

// zstd, bzip2 and xz data are read as they are, by their magic bytes (issue 43 item 1), concatenated frames and
// streams included; a truncated file is an error naming the format; another compressed format (zip) and data
// compressed twice (gzip inside gzip) are errors naming what they are, never compressed bytes read as text.
TEST(Cli, ZstdBzip2AndXzAreReadAsTheyAre) {
  for (const char* tool : {"zstd", "bzip2", "xz", "zip"})
    if (std::system((std::string("command -v ") + tool + " > /dev/null").c_str()) != 0)
      GTEST_SKIP() << tool << " is not installed (utl/setup installs it)";
  const std::string d = scratch_dir("compressed");
  const std::string plain = d + "/d.vw";
  ASSERT_EQ(
      std::system(("gzip -dc " + kData + "/vw/inputs/rcv1_small.vw.gz | head -n 300 > " + plain).c_str()), 0);
  const std::string make =
      "cd " + d + " && zstd -q -c d.vw > d.zst && (zstd -q -c d.vw; zstd -q -c d.vw) > two.zst" +
      " && bzip2 -c d.vw > d.bz2 && (bzip2 -c d.vw; bzip2 -c d.vw) > two.bz2 && xz -c d.vw > " +
      "d.xz && (xz -c d.vw; xz -c d.vw) > two.xz && gzip -c d.vw | gzip -c > twice.gz && " +
      "zip -q d.zip d.vw && head -c 2000 d.zst > cut.zst && head -c 2000 d.bz2 > cut.bz2 && " +
      "head -c 2000 d.xz > cut.xz";
  ASSERT_EQ(std::system(make.c_str()), 0);
  ASSERT_EQ(run_in(d, "d.vw -p ref --quiet"), 0);
  const std::string ref = read_file(d + "/ref");
  for (const std::string f : {"d.zst", "d.bz2", "d.xz"}) {
    ASSERT_EQ(run_in(d, f + " -p p --quiet"), 0) << f;
    EXPECT_EQ(read_file(d + "/p"), ref) << f;
    ASSERT_EQ(run_in(d, "- -p p --quiet < " + f), 0) << f;  // stdin too
    EXPECT_EQ(read_file(d + "/p"), ref) << f;
  }
  for (const std::string f : {"two.zst", "two.bz2", "two.xz"}) {
    ASSERT_EQ(run_in(d, f + " --quiet 2> e; " + std::string(LEPUS_BINARY) + " " + f + " 2> e"), 0) << f;
    EXPECT_EQ(summary_value(read_file(d + "/e"), "number of examples"), 600.0) << f;
  }
  struct Refused {
    std::string file, says;
  };
  for (const Refused& r : std::vector<Refused>{{"cut.zst", "zstd data: the file ends inside a frame"},
                                               {"cut.bz2", "bzip2 data: the file ends inside a stream"},
                                               {"cut.xz", "xz data: the file ends inside a stream"},
                                               {"d.zip", "zip data, which lepus does not read"},
                                               {"twice.gz", "gzip data inside gzip"}}) {
    EXPECT_EQ(run_in(d, r.file + " --quiet 2> e"), 1) << r.file;
    EXPECT_TRUE(has(read_file(d + "/e"), r.says)) << r.file << ": " << read_file(d + "/e");
  }
}

TEST(Cli, ExamplesLimitsTheRun) {
  const std::string d = scratch_dir("examples");
  ASSERT_EQ(run_lepus("-d " + kData + "/vw/inputs/abalone.vw.gz --examples 10 -p " + d + "/p.txt 2> " + d +
                      "/err.txt"),
            0);
  EXPECT_EQ(lines_of(read_file(d + "/p.txt")).size(), 10u);
  EXPECT_EQ(summary_value(read_file(d + "/err.txt"), "number of examples"), 10.0);
}

TEST(Cli, QuietSilencesStderr) {
  const std::string d = scratch_dir("quiet");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --quiet 2> " + d + "/err.txt"), 0);
  EXPECT_EQ(read_file(d + "/err.txt"), "");
}

TEST(Cli, ProgressEveryNExamples) {
  const std::string d = scratch_dir("progress");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -P 100 2> " + d + "/err.txt"), 0);
  const auto rows = table_and_summary(read_file(d + "/err.txt"));
  // header (2) + rows at 100 and 200
  ASSERT_GE(rows.size(), 4u);
  EXPECT_NE(rows[2].find(" 100 "), std::string::npos);
  EXPECT_NE(rows[3].find(" 200 "), std::string::npos);
}

// A VW option lepus lacks is one line that says so, and never names a lepus learner as if it did the same job.
TEST(Cli, VwOptionsLepusLacksAreAnsweredInOneLine) {
  const std::string d = scratch_dir("missing");
  EXPECT_EQ(run_lepus("--freegrad -d " + kData + "/heart_scale.vw 2> " + d + "/err.txt"), 1);
  const std::string err = read_file(d + "/err.txt");
  EXPECT_NE(err.find("--freegrad (VW's FreeGrad optimizer) is not in lepus"), std::string::npos) << err;
  EXPECT_EQ(err.find("--learner "), std::string::npos) << err;
  EXPECT_EQ(lines_of(err).size(), 1u);
}

TEST(Cli, BadOptionsAreOneLineErrors) {
  const std::string d = scratch_dir("bad");
  for (const std::string args : {"--no_such_option", "--loss_function nope", "-b 99", "--learner nope",
                                 "-d /nonexistent/file.vw", "-d /tmp", "--hash nope", "--link nope"}) {
    EXPECT_EQ(run_lepus(args + " 2> " + d + "/err.txt < /dev/null"), 1) << args;
    const std::string err = read_file(d + "/err.txt");
    EXPECT_EQ(lines_of(err).size(), 1u) << args << ": " << err;
    EXPECT_EQ(err.rfind("lepus: error: ", 0), 0u) << args << ": " << err;
  }
}

TEST(Cli, LearnerHelpListsTheRegistry) {
  const std::string d = scratch_dir("lhelp");
  ASSERT_EQ(run_lepus("--learner help > " + d + "/out.txt"), 0);
  const auto lines = lines_of(read_file(d + "/out.txt"));
  ASSERT_GE(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("sgd\t", 0), 0u);
}

TEST(Cli, HelpGroupsOptions) {
  const std::string d = scratch_dir("help");
  ASSERT_EQ(run_lepus("--help > " + d + "/out.txt"), 0);
  const std::string h = read_file(d + "/out.txt");
  for (const char* group : {"General:", "Input (data files", "Feature space:", "Loss and output link:",
                            "Learner 'sgd' options:", "Output:", "--learning_rate", "--bit_precision"})
    EXPECT_NE(h.find(group), std::string::npos) << group;
}

// docs/options.md naming every option --help lists: Docs.OptionsReferenceNamesEveryOption (docs_test.cc).

TEST(Cli, BinaryAndLinkOutputs) {
  const std::string d = scratch_dir("binary");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --loss_function logistic --binary -p " + d +
                      "/b.txt --link logistic --quiet"),
            0);
  for (double v : read_predictions(d + "/b.txt")) ASSERT_TRUE(v == 1.0 || v == -1.0);
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --loss_function logistic --link logistic -p " + d +
                      "/l.txt --quiet"),
            0);
  for (double v : read_predictions(d + "/l.txt")) ASSERT_TRUE(v > 0.0 && v < 1.0);
}

}  // namespace
}  // namespace lepus::e2e

namespace lepus::e2e {
namespace {

// Numbers that would wrap or mean nothing are refused naming the value; values that are legal but learn nothing
// get one warning (issue 43 item 4).
TEST(Cli, OptionsThatCannotWrapOrMislead) {
  const std::string d = scratch_dir("cli_ranges");
  const std::string data = std::string(LEPUS_TEST_DATA) + "/vw/inputs/rcv1_small.vw.gz";
  struct Refused {
    std::string args, says;
  };
  for (const Refused& r : std::vector<Refused>{
           {"--examples -5", "--examples must be a whole number >= 0, got '-5'"},
           {"--holdout_period -1 --passes 2 -c", "--holdout_period must be a whole number >= 1, got '-1'"},
           {"-l -1", "--learning_rate must be a number > 0, got '-1'"},
           {"--decay_learning_rate -1", "--decay_learning_rate must be a number >= 0, got '-1'"},
           {"--initial_t -3", "--initial_t must be a number >= 0, got '-3'"},
           {"--holdout_period 1 --passes 3 -c", "--holdout_period 1 holds out every example"},
           {"-i ''", "--initial_regressor needs a file name"},
           {"-f ''", "--final_regressor needs a file name"}}) {
    EXPECT_EQ(run_in(d, "-d " + data + " " + r.args + " --cache_file c 2> e"), 1) << r.args;
    EXPECT_TRUE(has(read_file(d + "/e"), r.says)) << r.args << ": " << read_file(d + "/e");
    EXPECT_FALSE(exists(d + "/c")) << r.args;  // refused before anything ran
  }
  // The message's own bound is accepted; beyond it is refused.
  EXPECT_EQ(run_in(d, "-d " + data + " --max_line_bytes 1T --quiet 2> e"), 0) << read_file(d + "/e");
  EXPECT_EQ(run_in(d, "-d " + data + " --max_line_bytes 2T --quiet 2> e"), 1);
  EXPECT_TRUE(has(read_file(d + "/e"), "between 1 and 1T")) << read_file(d + "/e");
  // Legal, but nothing would be learned: one warning line.
  EXPECT_EQ(run_in(d, "-d " + data + " --power_t 1e308 2> e"), 0);
  EXPECT_TRUE(has(read_file(d + "/e"), "[warning] --power_t 1e308 is above 1")) << read_file(d + "/e");
  // --binary with 0/1 labels: VW warns and goes on; so does lepus (a warning, not an error, exit 0).
  std::ofstream(d + "/01.vw") << "0 |a x:1\n1 |a y:1\n";
  EXPECT_EQ(run_in(d, "-d 01.vw --binary 2> e"), 0);
  EXPECT_TRUE(has(read_file(d + "/e"), "[warning] --binary expects labels -1 or 1")) << read_file(d + "/e");
  EXPECT_FALSE(has(read_file(d + "/e"), "[error]")) << read_file(d + "/e");
}

// Labels so large that an example's loss passes the float range (issue 43 item 5): the summary prints finite
// numbers and says how many losses were counted at the range's end, never inf or nan.
TEST(Cli, ExtremeLabelsAreCountedNotInfinite) {
  const std::string d = scratch_dir("cli_extreme");
  std::ofstream(d + "/x.vw") << "1e30 |a x:1\n-1e30 |a y:1\n1e30 |a x:1 y:2\n5 |a x:1\n";
  ASSERT_EQ(run_in(d, "-d x.vw --learner sgd 2> e"), 0);
  const std::string e = read_file(d + "/e");
  EXPECT_FALSE(has(e, "inf")) << e;
  EXPECT_FALSE(has(e, "nan")) << e;
  EXPECT_TRUE(std::isfinite(summary_value(e, "average loss"))) << e;
  EXPECT_EQ(summary_value(e, "example losses past the float range, each counted as 3.4e38"), 3.0) << e;
  // The default mixture too (its fourth prediction is also past the range).
  ASSERT_EQ(run_in(d, "-d x.vw 2> m"), 0);
  const std::string m = read_file(d + "/m");
  EXPECT_FALSE(has(m, "inf")) << m;
  EXPECT_FALSE(has(m, "nan")) << m;
  EXPECT_EQ(summary_value(m, "example losses past the float range, each counted as 3.4e38"), 4.0) << m;
}

}  // namespace
}  // namespace lepus::e2e
