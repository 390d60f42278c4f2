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
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --loss_function logistic -p " + d + "/b.txt --quiet"), 0);
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
  ASSERT_EQ(run_lepus("--format libsvm -d " + data + " --loss_function logistic -p " + d + "/p.txt --quiet"), 0);
  const auto m = compare_predictions(read_predictions(d + "/p.txt"), read_predictions(oracle), 1e-3);
  EXPECT_EQ(m.n, 32561u);
  EXPECT_GE(m.share(), 0.99);
}

TEST(Cli, StdinAndDevStdoutEqualFileRun) {
  const std::string d = scratch_dir("stdin");
  const std::string in = kData + "/vw/inputs/rcv1_small.vw.gz";
  ASSERT_EQ(run_lepus("-d " + in + " --loss_function logistic -p " + d + "/file.txt --quiet"), 0);
  // gzip through a pipe, recognised by its magic bytes; predictions to stdout through a pipe.
  ASSERT_EQ(run_lepus("--loss_function logistic -p /dev/stdout --quiet < " + in + " | cat > " + d + "/pipe.txt"), 0);
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
  for (const char* group : {"General:", "Input (data files", "Feature space:", "Loss and output link:", "Learner 'sgd' options:",
                            "Output:", "--learning_rate", "--bit_precision"})
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
