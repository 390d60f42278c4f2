// scinol-coord through the binary: predictions unchanged when feature columns of a text file are rescaled
// (collision-free at -b 24), save / load / resume, predict-only runs, passes, options.
#include <gtest/gtest.h>

#include <cstdio>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;

// Rewrites a libsvm or VW text with numeric feature names: the value of column j is multiplied by factor(j).
// %.9g keeps float precision, so each value is the rescaled one up to float rounding (the constant feature
// has no column and cannot be rescaled). Tokens without ':' (labels, "|f") are copied.
void rescale_columns(const std::string& in, const std::string& out, double (*factor)(long)) {
  std::ofstream o(out);
  for (const auto& line : lines_of(read_file(in))) {
    std::stringstream ss(line);
    std::string tok;
    bool first = true;
    while (ss >> tok) {
      if (!first) o << ' ';
      const size_t colon = tok.find(':');
      if (first || colon == std::string::npos) {
        o << tok;
      } else {
        const long j = std::strtol(tok.c_str(), nullptr, 10);
        const double v = std::strtod(tok.c_str() + colon + 1, nullptr) * factor(j);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        o << tok.substr(0, colon + 1) << buf;
      }
      first = false;
    }
    o << '\n';
  }
}

// An exactly rescaled pair from a text with numeric feature names: every value v becomes the integer
// k = round(1000 v) (the data changes, which the learner must not mind); for column j with factor f =
// factor(j), file a gets k and file b gets k f when |f| >= 1, and a gets k / f with b getting k when |f| < 1.
// All values are integers below 2^24, exact in float, so b is a with each column multiplied by exactly f: no
// float rounding enters the comparison. (Rounding does matter: scinol's weights are exponential in h^2 / s^2,
// so the ~6e-8 relative rounding of a rescaled decimal value grows while the weights are growing.)
void exact_pair(const std::string& in, const std::string& a_out, const std::string& b_out,
                double (*factor)(long)) {
  std::ofstream a(a_out), b(b_out);
  for (const auto& line : lines_of(read_file(in))) {
    std::stringstream ss(line);
    std::string tok;
    bool first = true;
    while (ss >> tok) {
      if (!first) a << ' ', b << ' ';
      const size_t colon = tok.find(':');
      if (first || colon == std::string::npos) {
        a << tok;
        b << tok;
      } else {
        const long j = std::strtol(tok.c_str(), nullptr, 10);
        const long long k = std::llround(std::strtod(tok.c_str() + colon + 1, nullptr) * 1000);
        const double f = factor(j);
        const long long ka = std::fabs(f) < 1 ? std::llround(k / f) : k,
                        kb = std::fabs(f) < 1 ? k : std::llround(k * f);
        a << tok.substr(0, colon + 1) << ka;
        b << tok.substr(0, colon + 1) << kb;
      }
      first = false;
    }
    a << '\n';
    b << '\n';
  }
}

double thousandths_and_thousands(long j) {
  static const double f[] = {1e-3, 1e3, -1e3, -1e-3};
  return f[j % 4];
}

struct Deviation {
  size_t n = 0, outside = 0;
  double max_abs = 0.0;
};

// Predictions within 2e-6 + 1e-4 |ŷ| (printed with 6 decimals).
Deviation compare_within(const std::vector<double>& a, const std::vector<double>& b) {
  Deviation d;
  d.n = std::min(a.size(), b.size());
  for (size_t i = 0; i < d.n; ++i) {
    const double dev = std::fabs(a[i] - b[i]);
    d.max_abs = std::max(d.max_abs, dev);
    if (dev > 2e-6 + 1e-4 * std::fabs(a[i])) ++d.outside;
  }
  return d;
}

// Trains on `data` and on its rescaled copy with `opts` at -b 24 (collision-free for these small column sets)
// and compares the progressive predictions. exact: compare the exact pair built from `data` instead.
void expect_invariant(std::string data, size_t rows, const std::string& name, const std::string& common_opts,
                      const std::string& scinol_opts, bool exact = false) {
  const std::string opts = common_opts + " " + scinol_opts;
  const std::string d = scratch_dir("scinol_inv_" + name);
  if (exact) {
    exact_pair(data, d + "/base", d + "/scaled", thousandths_and_thousands);
    data = d + "/base";
  } else {
    rescale_columns(data, d + "/scaled", thousandths_and_thousands);
  }
  const std::string common = " --learner scinol-coord -b 24 --quiet " + opts;
  ASSERT_EQ(run_lepus("-d " + data + " -p " + d + "/a.txt" + common), 0);
  ASSERT_EQ(run_lepus("-d " + d + "/scaled -p " + d + "/b.txt" + common), 0);
  const auto a = read_predictions(d + "/a.txt"), b = read_predictions(d + "/b.txt");
  ASSERT_EQ(a.size(), rows);
  ASSERT_EQ(b.size(), rows);
  const Deviation dev = compare_within(a, b);
  EXPECT_EQ(dev.outside, 0u) << name << " " << opts << ": max |dy| " << dev.max_abs;
  double spread = 0.0;
  for (double p : a) spread = std::max(spread, std::fabs(p));
  EXPECT_GT(spread, 0.1) << "the run must learn something for the comparison to mean anything";
  std::printf("[ %s %s ] %zu predictions, max |dy| = %.3g\n", name.c_str(), opts.c_str(), dev.n, dev.max_abs);
  // For the record: sgd (VW's normalized default) is scale invariant only approximately; how far it moves.
  const std::string sgd = " -b 24 --quiet " + common_opts;
  ASSERT_EQ(run_lepus("-d " + data + " -p " + d + "/sa.txt" + sgd), 0);
  ASSERT_EQ(run_lepus("-d " + d + "/scaled -p " + d + "/sb.txt" + sgd), 0);
  const Deviation s = compare_within(read_predictions(d + "/sa.txt"), read_predictions(d + "/sb.txt"));
  std::printf("[ %s, sgd ] %zu of %zu predictions moved beyond the tolerance, max |dy| = %.3g\n",
              name.c_str(), s.outside, s.n, s.max_abs);
}

TEST(Scinol, PredictionsDoNotMoveWhenColumnsAreRescaled) {
  // heart_scale (13 columns, 270 rows) with the squared loss in every d mode; abalone (8 columns, VW text).
  const std::string heart = kData + "/heart_scale.libsvm";
  for (const std::string mode : {"seen", "bits", "clock"})
    expect_invariant(heart, 270, "heart_" + mode, "--format libsvm", "--scinol_d " + mode);
  const std::string d = scratch_dir("scinol_abalone");
  ASSERT_EQ(std::system(("gzip -dc " + kData + "/vw/inputs/abalone.vw.gz > " + d + "/abalone.vw").c_str()),
            0);
  expect_invariant(d + "/abalone.vw", 4177, "abalone", "", "--scinol_L 1", /*exact=*/true);
}

TEST(Scinol, A9aPredictionsDoNotMoveWhenColumnsAreRescaled) {
  const std::string gz = LEPUS_SHARED_DIR "/data/a9a/a9a.gz";
  if (!exists(gz)) GTEST_SKIP() << "no ../shared";
  const std::string d = scratch_dir("scinol_a9a");
  ASSERT_EQ(std::system(("gzip -dc " + gz + " > " + d + "/a9a.libsvm").c_str()), 0);
  expect_invariant(d + "/a9a.libsvm", 32561, "a9a", "--format libsvm --loss_function logistic", "");
}

// Resumed training equals one run over both halves, in every d mode: the same predictions, the same state.
TEST(Scinol, ContinuedTrainingEqualsOneRun) {
  const std::string in = kData + "/vw/inputs/abalone.vw.gz";
  for (const std::string mode : {"seen", "bits", "clock"}) {
    const std::string d = scratch_dir("scinol_continue_" + mode);
    ASSERT_EQ(std::system(("gzip -dc " + in + " | head -n 2000 > " + d + "/a.vw").c_str()), 0);
    ASSERT_EQ(std::system(("gzip -dc " + in + " | tail -n +2001 > " + d + "/b.vw").c_str()), 0);
    ASSERT_EQ(std::system(("cat " + d + "/a.vw " + d + "/b.vw > " + d + "/ab.vw").c_str()), 0);
    const std::string opts = " --learner scinol-coord --scinol_d " + mode + " --scinol_L 10 -q ff --quiet";
    ASSERT_EQ(run_lepus("-d " + d + "/ab.vw -p " + d + "/all.txt --readable_model " + d + "/all.r" + opts),
              0);
    ASSERT_EQ(run_lepus("-d " + d + "/a.vw -f " + d + "/a.m" + opts), 0);
    ASSERT_EQ(run_lepus("-d " + d + "/b.vw -i " + d + "/a.m -p " + d + "/b.txt --readable_model " + d +
                        "/b.r --quiet"),
              0);
    const auto all = lines_of(read_file(d + "/all.txt"));
    const auto b = lines_of(read_file(d + "/b.txt"));
    ASSERT_EQ(all.size(), 4177u);
    ASSERT_EQ(b.size(), 2177u);
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], all[2000 + i]) << mode << " example " << 2001 + i;
    const std::string r = read_file(d + "/all.r");
    EXPECT_EQ(r, read_file(d + "/b.r")) << mode;
    EXPECT_NE(r.find("scinol_d " + mode + "\nt 4177\n"), std::string::npos) << r.substr(0, 300);
  }
}

// -t -i predicts without changing the model: the readable model after a test run equals the trained one, and
// a second test run predicts the same.
TEST(Scinol, PredictOnlyRunsLeaveTheModelAlone) {
  const std::string in = kData + "/vw/inputs/rcv1_small.vw.gz";
  const std::string d = scratch_dir("scinol_test_only");
  ASSERT_EQ(run_lepus("-d " + in + " --learner scinol-coord --loss_function logistic -f " + d +
                      "/m --readable_model " + d + "/a.r --quiet"),
            0);
  ASSERT_EQ(
      run_lepus("-d " + in + " -t -i " + d + "/m -p " + d + "/p1.txt --readable_model " + d + "/b.r --quiet"),
      0);
  ASSERT_EQ(run_lepus("-d " + in + " -t -i " + d + "/m -p " + d + "/p2.txt --quiet"), 0);
  EXPECT_EQ(read_file(d + "/a.r"), read_file(d + "/b.r"));
  EXPECT_EQ(read_file(d + "/p1.txt"), read_file(d + "/p2.txt"));
  EXPECT_EQ(lines_of(read_file(d + "/p1.txt")).size(), 1000u);
}

// Several passes are further rounds: t counts every learned example of every pass; the holdout is predicted
// only.
TEST(Scinol, PassesContinueTheRounds) {
  const std::string d = scratch_dir("scinol_passes");
  const std::string data = kData + "/heart_scale.libsvm";
  ASSERT_EQ(run_lepus("--format libsvm -d " + data +
                      " --learner scinol-coord --loss_function logistic --passes 3 "
                      "--holdout_off --cache_file " +
                      d + "/c --readable_model " + d + "/r.txt 2> " + d + "/err.txt"),
            0);
  const std::string r = read_file(d + "/r.txt");
  EXPECT_NE(r.find("\nt 810\n"), std::string::npos) << r.substr(0, 300);
  const double one = [&] {
    EXPECT_EQ(run_lepus("--format libsvm -d " + data +
                        " --learner scinol-coord --loss_function logistic 2> " + d + "/err1.txt"),
              0);
    return summary_value(read_file(d + "/err1.txt"), "average loss");
  }();
  const double three = summary_value(read_file(d + "/err.txt"), "average loss");
  EXPECT_LT(three, one);  // later passes start from a trained model
  ASSERT_EQ(run_lepus("--format libsvm -d " + data +
                      " --learner scinol-coord --loss_function logistic --passes 2 "
                      "--cache_file " +
                      d + "/c2 --readable_model " + d + "/h.txt --quiet"),
            0);
  // With the holdout on, every 10th line is predicted only, in both passes: 2 x 243 rounds.
  EXPECT_NE(read_file(d + "/h.txt").find("\nt 486\n"), std::string::npos)
      << read_file(d + "/h.txt").substr(0, 300);
}

TEST(Scinol, OptionsAreCheckedAndDescribed) {
  const std::string d = scratch_dir("scinol_options");
  const std::string data = " --format libsvm -d " + kData + "/heart_scale.libsvm";
  for (const std::string bad :
       {"--scinol_alpha 1.1", "--scinol_L 0", "--scinol_d rows", "--scinol_alpha x"}) {
    EXPECT_EQ(run_lepus("--learner scinol-coord " + bad + data + " 2> " + d + "/e.txt"), 1) << bad;
    EXPECT_EQ(lines_of(read_file(d + "/e.txt")).size(), 1u) << bad << ": " << read_file(d + "/e.txt");
  }
  EXPECT_EQ(run_lepus("--scinol_alpha 2" + data + " 2> " + d + "/e.txt"), 1);  // sgd's run: not its option
  ASSERT_EQ(run_lepus("--learner scinol-coord" + data + " 2> " + d + "/ok.txt"), 0);
  const std::string pre = read_file(d + "/ok.txt");
  EXPECT_NE(pre.find("scinol_alpha = 1.5\nscinol_L = 1\nscinol_d = seen\n"), std::string::npos) << pre;
  EXPECT_NE(pre.find("learner = scinol-coord"), std::string::npos);
  EXPECT_EQ(pre.find("numeric safeguards"), std::string::npos);
}

}  // namespace
}  // namespace lepus::e2e
