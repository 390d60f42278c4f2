// Multiclass and cost-sensitive reductions (--oaa, --probabilities, --named_labels, --csoaa) against VW 9.11.2's
// outputs on MNIST: with sgd (one table, classes at offsets, as VW) every -p and -r line and every table row is
// VW's, character for character. The first 500 rows and VW's lines for them are in test/data/vw; the full
// 3,000-row runs (summaries, passes with a cache, a saved model) run when ../shared/oracles is present. Then
// other learners as the base (one instance per class): they learn, save and load.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const char* const kNames = "zero,one,two,three,four,five,six,seven,eight,nine";

std::vector<std::string> gz_lines(const std::string& path) {  // gzip -dc, as the parity tests read VW's files
  std::vector<std::string> out;
  std::FILE* f = ::popen(("gzip -dc " + path).c_str(), "r");
  if (!f) return out;
  std::string line;
  char buf[1 << 16];
  while (std::fgets(buf, sizeof buf, f)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      out.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) out.push_back(line);
  ::pclose(f);
  return out;
}

// The MNIST rows with their label turned into a name (VW's mnist3k_named) or into costs: 0 for the true class,
// 1 for the others (mnist3k_cs).
void write_variant(const std::vector<std::string>& rows, const std::string& path, bool named) {
  static const std::vector<std::string> names = {"zero", "one", "two",   "three", "four",
                                                 "five", "six", "seven", "eight", "nine"};
  std::ofstream out(path);
  for (const std::string& r : rows) {
    const size_t bar = r.find(" |");
    const int label = std::stoi(r.substr(0, bar));
    if (named) {
      out << names[label - 1];
    } else {
      for (int k = 1; k <= 10; ++k) out << (k > 1 ? " " : "") << k << ":" << (k == label ? 0 : 1);
    }
    out << r.substr(bar) << "\n";
  }
}

std::vector<std::string> table_rows(const std::string& stderr_text) {
  std::vector<std::string> rows;
  for (const std::string& l : lines_of(stderr_text))
    if (!l.empty() && l[0] >= '0' && l[0] <= '9') rows.push_back(l);
  return rows;
}

void expect_same_lines(const std::vector<std::string>& ours, const std::vector<std::string>& vw,
                       const char* what) {
  ASSERT_EQ(ours.size(), vw.size()) << what;
  size_t differ = 0, first = ours.size();
  for (size_t i = 0; i < ours.size(); ++i)
    if (ours[i] != vw[i]) {
      ++differ;
      first = std::min(first, i);
    }
  EXPECT_EQ(differ, 0u) << what << ": first difference at line " << first + 1 << ": '"
                        << (first < ours.size() ? ours[first] : "") << "' vs VW '"
                        << (first < vw.size() ? vw[first] : "") << "'";
}

struct McRun {
  std::string name;   // the oracle's NAME
  std::string input;  // "plain", "named" or "cs"
  std::string args;
  bool raw = false;
};

void PrintTo(const McRun& r, std::ostream* os) { *os << r.name; }

const std::vector<McRun> kRuns = {
    {"01_oaa_sgd", "plain", "--oaa 10 --sgd -l 0.5", true},
    {"02_oaa_normalized", "plain", "--oaa 10 --normalized"},
    {"04_oaa_probabilities_sgd", "plain", "--oaa 10 --loss_function logistic --probabilities --sgd -l 0.5"},
    {"05_named_labels_sgd", "named", std::string("--oaa 10 --named_labels ") + kNames + " --sgd -l 0.5"},
    {"06_csoaa_sgd", "cs", "--csoaa 10 --sgd -l 0.5"},
};

// Runs r on rows (written in its input's variant) and compares with VW's files under `vw_dir` (NAME.pred,
// NAME.raw, and the table rows: NAME.rows, or NAME.stderr's rows and summary when `full`).
void check(const McRun& r, const std::vector<std::string>& rows, const std::string& vw_dir, bool full) {
  const std::string out = scratch_dir("mc_" + r.name);
  const std::string data = out + "/data.vw";
  if (r.input == "plain") {
    std::ofstream f(data);
    for (const auto& l : rows) f << l << "\n";
  } else {
    write_variant(rows, data, r.input == "named");
  }
  std::string cmd = "-d " + data + " " + r.args + " -p " + out + "/p.txt";
  if (r.raw) cmd += " -r " + out + "/r.txt";
  ASSERT_EQ(run_lepus(cmd + " 2> " + out + "/err.txt"), 0) << read_file(out + "/err.txt");
  const std::string err = read_file(out + "/err.txt");
  expect_same_lines(lines_of(read_file(out + "/p.txt")), lines_of(read_file(vw_dir + "/" + r.name + ".pred")),
                    "-p");
  if (r.raw)
    expect_same_lines(lines_of(read_file(out + "/r.txt")),
                      lines_of(read_file(vw_dir + "/" + r.name + ".raw")), "-r");
  if (full) {
    const std::string vw_err = read_file(vw_dir + "/" + r.name + ".stderr");
    expect_same_lines(table_rows(err), table_rows(vw_err), "table");
    for (const char* key : {"average loss", "average multiclass log loss", "weighted label sum"})
      if (has(vw_err, std::string(key) + " =")) {
        EXPECT_EQ(summary_value(err, key), summary_value(vw_err, key)) << key;
      }
  } else {
    expect_same_lines(table_rows(err), lines_of(read_file(vw_dir + "/" + r.name + ".rows")), "table");
  }
  std::filesystem::remove_all(out);
}

class LocalMulticlass : public ::testing::TestWithParam<McRun> {};
TEST_P(LocalMulticlass, MatchesVw) {
  const auto rows = gz_lines(LEPUS_TEST_DATA "/vw/inputs/mnist500.vw.gz");
  ASSERT_EQ(rows.size(), 500u);
  check(GetParam(), rows, LEPUS_TEST_DATA "/vw/multiclass", false);
}
INSTANTIATE_TEST_SUITE_P(Copies, LocalMulticlass, ::testing::ValuesIn(kRuns));

const std::string kShared = LEPUS_SHARED_DIR "/oracles/vw";

class SharedMulticlass : public ::testing::TestWithParam<McRun> {};
TEST_P(SharedMulticlass, MatchesVw) {
  if (!exists(kShared + "/multiclass")) GTEST_SKIP() << "no ../shared oracles";
  check(GetParam(), gz_lines(kShared + "/inputs/mnist3k.vw.gz"), kShared + "/multiclass", true);
}
INSTANTIATE_TEST_SUITE_P(Full, SharedMulticlass, ::testing::ValuesIn(kRuns));

// VW's three passes with a cache and holdout, and its -t run with the final model (lepus's own model file).
TEST(SharedMulticlass, PassesAndSavedModelMatchVw) {
  if (!exists(kShared + "/multiclass")) GTEST_SKIP() << "no ../shared oracles";
  const std::string out = scratch_dir("mc_passes");
  const std::string data = out + "/mnist3k.vw.gz";
  std::filesystem::copy_file(kShared + "/inputs/mnist3k.vw.gz", data);
  ASSERT_EQ(run_lepus("-d " + data + " --oaa 10 --sgd -l 0.5 --passes 3 -c -k -p " + out + "/p3.txt 2> " +
                      out + "/err3.txt"),
            0)
      << read_file(out + "/err3.txt");
  expect_same_lines(lines_of(read_file(out + "/p3.txt")),
                    lines_of(read_file(kShared + "/multiclass/07_oaa_sgd_passes3.pred")), "-p, 3 passes");
  const std::string vw3 = read_file(kShared + "/multiclass/07_oaa_sgd_passes3.stderr");
  EXPECT_EQ(summary_value(read_file(out + "/err3.txt"), "average loss"), summary_value(vw3, "average loss"));
  ASSERT_EQ(run_lepus("-d " + data + " --oaa 10 --sgd -l 0.5 -f " + out + "/m --quiet"), 0);
  ASSERT_EQ(run_lepus("-d " + data + " -t -i " + out + "/m -p " + out + "/pt.txt --quiet"), 0);
  expect_same_lines(lines_of(read_file(out + "/pt.txt")),
                    lines_of(read_file(kShared + "/multiclass/09_oaa_sgd_test.pred")), "-t -i");
  std::filesystem::remove_all(out);
}

// A label that names no class is a warning naming file:line, counted in the summary, the example kept
// unlabeled (predicted, not learned); --strict_parse makes it an error (exit 1).
TEST(Multiclass, UnknownLabelsWarnWithTheirLine) {
  const std::string d = scratch_dir("mc_unknown");
  std::ofstream(d + "/t.vw") << "a |f x y\nb |f y z\nq |f x z\nc |f z\n";
  ASSERT_EQ(run_in(d, "-d t.vw --oaa 3 --named_labels a,b,c -p p.txt 2> e.txt"), 0);
  const std::string err = read_file(d + "/e.txt");
  EXPECT_TRUE(has(err, "t.vw:3")) << err;
  EXPECT_TRUE(has(err, "malformed input warnings = 1")) << err;
  EXPECT_EQ(lines_of(read_file(d + "/p.txt")).size(), 4u);
  EXPECT_EQ(run_in(d, "-d t.vw --oaa 3 --named_labels a,b,c --strict_parse 2> e.txt"), 1);
  EXPECT_TRUE(has(read_file(d + "/e.txt"), "t.vw:3")) << read_file(d + "/e.txt");
  // A cost-sensitive label in another format is refused before anything is read.
  EXPECT_EQ(run_in(d, "--format libsvm -d t.vw --csoaa 3 2> e.txt"), 1);
  EXPECT_EQ(lines_of(read_file(d + "/e.txt")).size(), 1u);
  std::filesystem::remove_all(d);
}

// Any learner is a base: one instance per class. It learns MNIST's first 500 rows (progressive error well
// below the 90% of guessing, by 500 rows), -t -i with its model predicts as the end of training did, and a model refuses a
// command line with another number of classes.
class BaseLearners : public ::testing::TestWithParam<std::string> {};
TEST_P(BaseLearners, LearnSaveAndPredict) {
  const auto rows = gz_lines(LEPUS_TEST_DATA "/vw/inputs/mnist500.vw.gz");
  const std::string out = scratch_dir("mc_base");
  {
    std::ofstream f(out + "/train.vw");
    for (const auto& l : rows) f << l << "\n";
  }
  const std::string args = GetParam();
  ASSERT_EQ(run_lepus("-d " + out + "/train.vw " + args + " -f " + out + "/m 2> " + out + "/err.txt"), 0)
      << read_file(out + "/err.txt");
  const double error = summary_value(read_file(out + "/err.txt"), "average loss");
  EXPECT_LT(error, 0.8) << args;  // guessing: 0.9
  // The saved model predicts the training rows as one more pass of predictions from the final state would.
  ASSERT_EQ(run_lepus("-d " + out + "/train.vw -t -i " + out + "/m -p " + out + "/a.txt --quiet"), 0);
  ASSERT_EQ(run_lepus("-d " + out + "/train.vw -t -i " + out + "/m -p " + out + "/b.txt --quiet"), 0);
  const auto a = lines_of(read_file(out + "/a.txt"));
  EXPECT_EQ(a.size(), rows.size());
  EXPECT_EQ(a, lines_of(read_file(out + "/b.txt")));
  size_t right = 0;
  for (size_t i = 0; i < a.size() && i < rows.size(); ++i)
    right += a[i] == rows[i].substr(0, rows[i].find(' '));
  EXPECT_GT(right, rows.size() / 3) << args << ": training-set accuracy of the final model (guessing: 1/10)";
  const std::string other = args.find("--oaa") != std::string::npos ? "--oaa 9" : "--csoaa 9";
  EXPECT_NE(
      run_lepus("-d " + out + "/train.vw -t -i " + out + "/m " + other + " --quiet 2> " + out + "/e2.txt"),
      0);
  EXPECT_TRUE(has(read_file(out + "/e2.txt"), "conflicts with the model")) << read_file(out + "/e2.txt");
  std::filesystem::remove_all(out);
}
INSTANTIATE_TEST_SUITE_P(Reductions, BaseLearners,
                         ::testing::Values("--oaa 10 --learner scinol-coord",
                                           "--oaa 10 --learner ftprl-diag --loss_function logistic",
                                           "--oaa 10 --learner aioli --matrix sketch --rank 5",
                                           "--oaa 10 --learner kons --budget 40 --loss_function logistic",
                                           "--oaa 10 --learner sgd --loss_function logistic",
                                           "--oaa 10 --learner scinol-full --matrix sketch --rank 5"));

}  // namespace
}  // namespace lepus::e2e
