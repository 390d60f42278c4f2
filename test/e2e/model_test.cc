// The train / save / load / predict / continue workflow, damaged models and bad input, through the binary.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;
const std::string kRcv1 = kData + "/vw/inputs/rcv1_small.vw.gz";

std::string one_line_error(const std::string& args, const std::string& dir) {
  const int rc = run_lepus(args + " 2> " + dir + "/err.txt < /dev/null");
  const std::string err = read_file(dir + "/err.txt");
  EXPECT_EQ(rc, 1) << args << ": " << err;
  EXPECT_EQ(lines_of(err).size(), 1u) << args << ": " << err;
  return err;
}

// A model saved in format version 1 (before sections; test/data/models/README.md) still loads, and predicts as
// VW's oracle does.
TEST(Model, FormatVersionOneStillLoads) {
  const std::string d = scratch_dir("v1");
  const std::string e2e = kData + "/vw/e2e";
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_test.vw -t -i " + kData +
                      "/models/v1_tinyq.model --loss_function logistic -p " + d + "/p.txt -r " + d +
                      "/r.txt --quiet"),
            0);
  EXPECT_EQ(read_file(d + "/p.txt"), read_file(e2e + "/tinyq_test.pred"));
  EXPECT_EQ(read_file(d + "/r.txt"), read_file(e2e + "/tinyq_test.raw"));
  // Re-saved, it is a version 2 model (sections) holding the same state.
  ASSERT_EQ(run_lepus("-t -i " + kData + "/models/v1_tinyq.model --no_stdin -f " + d + "/v2.model --quiet"),
            0);
  const std::string v2 = read_file(d + "/v2.model");
  ASSERT_GE(v2.size(), 12u);
  EXPECT_EQ(static_cast<unsigned char>(v2[8]), 2u);
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_test.vw -t -i " + d + "/v2.model --loss_function logistic -p " +
                      d + "/p2.txt --quiet"),
            0);
  EXPECT_EQ(read_file(d + "/p2.txt"), read_file(e2e + "/tinyq_test.pred"));
}

// VW's own e2e oracle: train with -f, then -t -i on other data; lepus's test predictions equal VW's.
TEST(Model, TrainThenTestMatchesVwOracle) {
  const std::string d = scratch_dir("tiny");
  const std::string e2e = kData + "/vw/e2e";
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_train.vw --learner sgd -f " + d + "/tiny.model --quiet"), 0);
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_test.vw -t -i " + d + "/tiny.model -p " + d + "/p.txt -r " + d +
                      "/r.txt --quiet"),
            0);
  EXPECT_EQ(read_file(d + "/p.txt"), read_file(e2e + "/tiny_test.pred"));
  EXPECT_EQ(read_file(d + "/r.txt"), read_file(e2e + "/tiny_test.raw"));
  // -q restored from the model; the loss given again (as VW users do) is the model's, so no warning.
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_train.vw --learner sgd --loss_function logistic -q uv -f " + d +
                      "/q.model --quiet"),
            0);
  ASSERT_EQ(run_lepus("-d " + e2e + "/tiny_test.vw -t -i " + d + "/q.model --loss_function logistic -p " + d +
                      "/qp.txt -r " + d + "/qr.txt 2> " + d + "/err.txt"),
            0);
  EXPECT_EQ(read_file(d + "/qp.txt"), read_file(e2e + "/tinyq_test.pred"));
  EXPECT_EQ(read_file(d + "/qr.txt"), read_file(e2e + "/tinyq_test.raw"));
  EXPECT_EQ(read_file(d + "/err.txt").find("[warning]"), std::string::npos);
}

TEST(Model, Rcv1TrainThenTestMatchesVwOracle) {
  const std::string root = LEPUS_SHARED_DIR "/oracles/vw";
  if (!exists(root + "/e2e/rcv1_test.pred")) GTEST_SKIP() << "no ../shared";
  const std::string d = scratch_dir("rcv1_oracle");
  ASSERT_EQ(run_lepus("-d " + root + "/inputs/rcv1_small.vw.gz --learner sgd --loss_function logistic -f " +
                      d + "/m --quiet"),
            0);
  ASSERT_EQ(run_lepus("-d " + root + "/inputs/rcv1_small_test.vw.gz -t -i " + d +
                      "/m --loss_function logistic -p " + d + "/p.txt 2> " + d + "/err.txt"),
            0);
  const auto m = compare_predictions(read_predictions(d + "/p.txt"),
                                     read_predictions(root + "/e2e/rcv1_test.pred"), 1e-3);
  EXPECT_EQ(m.n, 500u);
  EXPECT_GE(m.share(), 0.99);
  EXPECT_NEAR(summary_value(read_file(d + "/err.txt"), "average loss"),
              summary_value(read_file(root + "/e2e/rcv1_test.stderr"), "average loss"), 0.005 * 0.364);
  // -t counts the test labels in the summary, as VW does.
  for (const char* key : {"weighted label sum", "best constant", "best constant's loss"})
    EXPECT_EQ(summary_value(read_file(d + "/err.txt"), key),
              summary_value(read_file(root + "/e2e/rcv1_test.stderr"), key))
        << key;
}

// The loaded model predicts as the saved one: -t -i reproduces the final weights and every per-slot sum
// exactly
// (--readable_full: lepus's layout, which keeps them under -t).
TEST(Model, LoadedModelHasTheSavedState) {
  const std::string d = scratch_dir("state");
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " --loss_function logistic -q ff -f " + d +
                      "/m --readable_full --readable_model " + d + "/a.txt --quiet"),
            0);
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " -t -i " + d + "/m --readable_full --readable_model " + d +
                      "/b.txt -p " + d + "/p1.txt --quiet"),
            0);
  EXPECT_EQ(read_file(d + "/a.txt"), read_file(d + "/b.txt"));
  EXPECT_GT(lines_of(read_file(d + "/a.txt")).size(), 1000u);
  // Predicting twice from the model gives the same predictions; predict-only never changes the model.
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " -t -i " + d + "/m -p " + d + "/p2.txt --quiet"), 0);
  EXPECT_EQ(read_file(d + "/p1.txt"), read_file(d + "/p2.txt"));
}

// Continuing from a saved model equals one run over both files: same predictions, same final state (VW's
// layout would differ in the run's own counts, which a run from -i starts again).
TEST(Model, ContinuedTrainingEqualsOneRun) {
  const std::string d = scratch_dir("continue");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | head -n 600 > " + d + "/a.vw").c_str()), 0);
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | tail -n +601 > " + d + "/b.vw").c_str()), 0);
  ASSERT_EQ(std::system(("cat " + d + "/a.vw " + d + "/b.vw > " + d + "/ab.vw").c_str()), 0);
  const std::string opts = " --loss_function logistic -q ff --l2 1e-7 --quiet";
  ASSERT_EQ(run_lepus("-d " + d + "/ab.vw -p " + d + "/all.txt -f " + d +
                      "/all.m --readable_full --readable_model " + d + "/all.r" + opts),
            0);
  ASSERT_EQ(run_lepus("-d " + d + "/a.vw -f " + d + "/a.m" + opts), 0);
  ASSERT_EQ(run_lepus("-d " + d + "/b.vw -i " + d + "/a.m -p " + d + "/b.txt -f " + d +
                      "/b.m --readable_full --readable_model " + d + "/b.r --quiet"),
            0);
  const auto all = lines_of(read_file(d + "/all.txt"));
  const auto b = lines_of(read_file(d + "/b.txt"));
  ASSERT_EQ(all.size(), 1000u);
  ASSERT_EQ(b.size(), 400u);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], all[600 + i]) << "example " << 601 + i;
  EXPECT_EQ(read_file(d + "/all.r"), read_file(d + "/b.r"));
}

// --readable_model writes VW 9.11.2's file byte for byte (issue 43 item 13): its header with the options VW
// keeps and their checksum, gd's state among the run's figures, and the slot lines (the figures follow the
// progress table, so these runs print it, as VW's did).
TEST(ReadableModel, IsVwsByteForByte) {
  const std::string d = scratch_dir("readable_vw");
  const std::string abalone = kData + "/vw/inputs/abalone.vw.gz";
  ASSERT_EQ(
      run_in(d, "-d " + kData + "/vw/e2e/tiny_train.vw --learner sgd -f m --readable_model tiny.r 2> e"), 0);
  EXPECT_EQ(read_file(d + "/tiny.r"), read_file(kData + "/vw/e2e/tiny.readable"));
  ASSERT_EQ(run_in(d, "-d " + abalone + " --sgd -l 0.5 --readable_model sgd.r 2> e"), 0);
  EXPECT_EQ(read_file(d + "/sgd.r"), read_file(kData + "/vw/abalone/02_sgd_model.readable"));
  ASSERT_EQ(run_in(d, "-d " + abalone + " --learner sgd -q ff --readable_model q.r 2> e"), 0);
  EXPECT_EQ(read_file(d + "/q.r"), read_file(kData + "/vw/abalone/05_q_ff_model.readable"));
  // Under -t VW writes index:weight alone (its adaptive and normalizer sums are for training), as lepus does.
  ASSERT_EQ(run_in(d, "-d " + kData + "/vw/e2e/tiny_test.vw -t -i m --readable_model t.r 2> e"), 0);
  const std::string t = read_file(d + "/t.r");
  EXPECT_EQ(t.substr(0, t.find(":1\n")),
            read_file(d + "/tiny.r").substr(0, t.find(":1\n")));  // the same header
  size_t slots = 0;
  for (const auto& line : lines_of(t)) {
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string::npos || line.find_first_not_of("0123456789") != colon) continue;
    ++slots;
    EXPECT_EQ(line.find(' '), std::string::npos) << line;  // index:weight, nothing more
  }
  EXPECT_EQ(slots, 9u) << t;
}

// --readable_full: lepus's own layout, with every learner's full state (sgd's per-slot sums under -t too) and each
// number exact (VW's layout has VW's 6 digits: "61236:0.0718349"); another learner than sgd writes VW's header,
// then its own lines.
TEST(ReadableModel, FullLayoutAndOtherLearners) {
  const std::string d = scratch_dir("readable_full_layout");
  ASSERT_EQ(
      run_in(d, "-d " + kData + "/vw/e2e/tiny_train.vw -f m --readable_full --readable_model a.r --quiet"),
      0);
  ASSERT_EQ(
      run_in(d, "-d " + kData + "/vw/e2e/tiny_test.vw -t -i m --readable_full --readable_model b.r --quiet"),
      0);
  const std::string a = read_file(d + "/a.r");
  EXPECT_EQ(a.rfind("lepus ", 0), 0u) << a;
  EXPECT_TRUE(has(a, "\n61236:0.07183486 15.741004 3\n")) << a;  // exact: each float as the float it is
  EXPECT_EQ(read_file(d + "/b.r"), a);
  EXPECT_EQ(run_in(d, "-d " + kData + "/vw/e2e/tiny_train.vw --readable_full 2> e"), 1);
  EXPECT_TRUE(has(read_file(d + "/e"), "give one of them")) << read_file(d + "/e");
  ASSERT_EQ(run_in(d, "-d " + kData + "/vw/e2e/tiny_train.vw --learner scinol2 --readable_model s.r --quiet"),
            0);
  const std::string s2 = read_file(d + "/s.r");
  EXPECT_EQ(s2.rfind("Version 9.11.2\nId \n", 0), 0u) << s2;
  EXPECT_TRUE(has(s2, "\noptions: --learner scinol2\nChecksum: ")) << s2;
}

TEST(Model, PipesInAndOutWithAModel) {
  const std::string d = scratch_dir("pipe_model");
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " --loss_function logistic -f " + d + "/m --quiet"), 0);
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " -t -i " + d + "/m -p " + d + "/file.txt --quiet"), 0);
  ASSERT_EQ(run_lepus("-t -i " + d + "/m -p /dev/stdout --quiet < " + kRcv1 + " | cat > " + d + "/pipe.txt"),
            0);
  EXPECT_EQ(read_file(d + "/file.txt"), read_file(d + "/pipe.txt"));
}

TEST(Model, ConflictingOptionsAreErrorsLossOverridesWithAWarning) {
  const std::string d = scratch_dir("conflict");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -b 16 -q ff -f " + d + "/m --quiet"), 0);
  std::string err = one_line_error("-d " + kData + "/heart_scale.vw -i " + d + "/m -b 18", d);
  EXPECT_NE(err.find("--bit_precision 18 conflicts with the model's --bit_precision 16"), std::string::npos)
      << err;
  err = one_line_error("-d " + kData + "/heart_scale.vw -i " + d + "/m -q ab", d);
  EXPECT_NE(err.find("conflicts with the model's --quadratic ff"), std::string::npos) << err;
  err = one_line_error("-d " + kData + "/heart_scale.vw -i " + d + "/m --noconstant", d);
  EXPECT_NE(err.find("conflicts"), std::string::npos) << err;
  ASSERT_EQ(
      run_lepus("-d " + kData + "/heart_scale.vw -t -i " + d + "/m --loss_function hinge 2> " + d + "/w.txt"),
      0);
  EXPECT_NE(read_file(d + "/w.txt")
                .find("[warning] --loss_function hinge overrides the model's --loss_function "
                      "squared"),
            std::string::npos);
  // Restored without being given: -b 16 and -q ff apply.
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -t -i " + d + "/m 2> " + d + "/pre.txt"), 0);
  const std::string pre = read_file(d + "/pre.txt");
  EXPECT_NE(pre.find("Num weight bits = 16"), std::string::npos);
  EXPECT_NE(pre.find("creating quadratic features for pairs: ff"), std::string::npos);
}

TEST(Model, DamagedModelsAreRefusedInOneLine) {
  const std::string d = scratch_dir("damaged");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -f " + d + "/good --quiet"), 0);
  const std::string good = read_file(d + "/good");
  ASSERT_GT(good.size(), 100u);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(d + "/" + name, std::ios::binary) << bytes;
    return d + "/" + name;
  };
  const std::string in = " -d " + kData + "/heart_scale.vw -t";
  struct Case {
    std::string path;
    std::string expect;
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  const Case cases[] = {
      {write("empty", ""), "the file is empty"},
      {write("truncated", good.substr(0, good.size() - 9)), "checksum mismatch"},
      {write("flipped", flipped), "checksum mismatch"},
      {write("text", "this is not a model at all\n"), "not a lepus model"},
      {kData + "/vw/e2e/vw_tiny.model", "Vowpal Wabbit model"},
      {d + "/absent", "cannot open model"},
      {d, "is a directory"},
  };
  for (const auto& c : cases) {
    const std::string err = one_line_error("-i " + c.path + in, d);
    EXPECT_NE(err.find(c.path), std::string::npos) << err;
    EXPECT_NE(err.find(c.expect), std::string::npos) << err;
  }
}

TEST(Model, FinalRegressorIsReplacedAtomically) {
  const std::string d = scratch_dir("atomic");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -f " + d + "/m --quiet"), 0);
  ASSERT_EQ(run_lepus("-d " + kRcv1 + " -f " + d + "/m --quiet"), 0);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left behind
  EXPECT_EQ(run_lepus("-d " + kData + "/heart_scale.vw -f " + d + "/no/such/dir/m --quiet 2> /dev/null"), 1);
}

// Bad input: VW's handling with file:line warnings counted in the summary, or the first one an error.
TEST(BadInput, LenientWarnsWithFileAndLineAndCounts) {
  const std::string d = scratch_dir("bad_lenient");
  std::ofstream(d + "/bad.vw") << "1 |f a b\nabc |f c\n-1 |f a:1,5 d\n1 |f e:nan\n1 |f g:inf\n-1 |f h\n";
  ASSERT_EQ(run_lepus("-d " + d + "/bad.vw -p " + d + "/p.txt 2> " + d + "/err.txt"), 0);
  const std::string err = read_file(d + "/err.txt");
  EXPECT_NE(err.find("[warning] " + d + "/bad.vw:2: 'abc' is not a good float"), std::string::npos) << err;
  EXPECT_NE(err.find(d + "/bad.vw:3: malformed example!"), std::string::npos) << err;
  EXPECT_NE(err.find(d + "/bad.vw:4: Invalid feature value"), std::string::npos) << err;
  EXPECT_NE(err.find(d + "/bad.vw:5: Invalid feature value"), std::string::npos) << err;
  EXPECT_EQ(summary_value(err, "malformed input warnings"), 5.0) << err;  // line 3 warns twice, as VW does
  EXPECT_EQ(lines_of(read_file(d + "/p.txt")).size(), 6u);
  for (double v : read_predictions(d + "/p.txt")) EXPECT_TRUE(std::isfinite(v));
}

TEST(BadInput, StrictStopsAtTheFirstWithFileAndLine) {
  const std::string d = scratch_dir("bad_strict");
  std::ofstream(d + "/bad.vw") << "1 |f a b\n-1 |f c\n1 |f a:1,5 d\n1 |f e:nan\n";
  EXPECT_EQ(run_lepus("-d " + d + "/bad.vw --strict_parse -p " + d + "/p.txt 2> " + d + "/err.txt"), 1);
  const auto err = lines_of(read_file(d + "/err.txt"));
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back().rfind("lepus: error: " + d + "/bad.vw:3: malformed example!", 0), 0u) << err.back();
  EXPECT_EQ(read_file(d + "/err.txt").find("[warning]"), std::string::npos);
  EXPECT_EQ(run_lepus("-d " + d + "/bad.vw --quiet"), 0);
}

TEST(Labels, PositiveLabelMapsEveryFormat) {
  const std::string d = scratch_dir("poslabel");
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --loss_function logistic -p " + d + "/a.txt --quiet"),
            0);
  ASSERT_EQ(run_lepus("--format libsvm -d " + kData +
                      "/heart_scale.libsvm --positive_label +1 "
                      "--loss_function logistic -p " +
                      d + "/b.txt --quiet"),
            0);
  EXPECT_EQ(read_file(d + "/a.txt"), read_file(d + "/b.txt"));
  // 1/2 labels: "2" is the positive class.
  std::ofstream(d + "/12.vw") << "2 |f a\n1 |f b\n2 |f a c\n1 |f b c\n";
  std::ofstream(d + "/pm.vw") << "1 |f a\n-1 |f b\n1 |f a c\n-1 |f b c\n";
  ASSERT_EQ(run_lepus("-d " + d + "/12.vw --positive_label 2 --loss_function logistic -p " + d +
                      "/c.txt 2> " + d + "/e1.txt"),
            0);
  ASSERT_EQ(run_lepus("-d " + d + "/pm.vw --loss_function logistic -p " + d + "/d.txt --quiet"), 0);
  EXPECT_EQ(read_file(d + "/c.txt"), read_file(d + "/d.txt"));
  EXPECT_EQ(read_file(d + "/e1.txt").find("[warning]"), std::string::npos);
  // Without it, a 1/2-labelled logistic run is warned about once.
  ASSERT_EQ(run_lepus("-d " + d + "/12.vw --loss_function logistic 2> " + d + "/e2.txt"), 0);
  const std::string e2 = read_file(d + "/e2.txt");
  EXPECT_NE(e2.find("label 2 is not -1 or 1"), std::string::npos) << e2;
  EXPECT_EQ(e2.find("is not -1 or 1"), e2.rfind("is not -1 or 1"));
}

}  // namespace
}  // namespace lepus::e2e
