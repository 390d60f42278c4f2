// --progress_log from the command line: rows at even steps on a log axis of the example count, whatever -P and
// --quiet say; the same losses as the progress table and the summary (progressive, -t, holdout passes); a bad
// path is an error before any example is read. And utl/plot drawing two such logs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

// 4,177 examples: rows in three full decades and part of a fourth.
const std::string kAbalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";
const std::string kHeader =
    "examples\tweighted_examples\taverage_loss\tsince_last\tlabel\tprediction\tfeatures\tholdout";

struct LogRow {
  uint64_t examples = 0;
  double weight = 0.0, average = NAN, since_last = NAN;
  bool holdout = false;
};

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, '\t')) out.push_back(c);
  return out;
}

// The log's rows; its header is checked here.
std::vector<LogRow> read_log(const std::string& path) {
  const auto lines = lines_of(read_file(path));
  std::vector<LogRow> rows;
  EXPECT_FALSE(lines.empty()) << path;
  if (lines.empty()) return rows;
  EXPECT_EQ(lines[0], kHeader);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto c = cells_of(lines[i]);
    EXPECT_EQ(c.size(), 8u) << lines[i];
    if (c.size() != 8) continue;
    auto number = [](const std::string& s) { return s == "NA" ? NAN : std::strtod(s.c_str(), nullptr); };
    rows.push_back(LogRow{std::stoull(c[0]), number(c[1]), number(c[2]), number(c[3]), c[7] == "1"});
  }
  return rows;
}

// The progress table's average loss by example counter (VW's fixed 8 characters: cut, so close to 1e-5).
std::map<uint64_t, double> table_averages(const std::string& stderr_text) {
  std::map<uint64_t, double> out;
  for (const auto& l : table_and_summary(stderr_text)) {
    std::stringstream ss(l);
    std::string average, since;
    uint64_t counter = 0;
    if (!(ss >> average >> since >> counter) || !is_number(average)) continue;
    out[counter] = std::strtod(average.c_str(), nullptr);
  }
  return out;
}

void expect_same_loss(double log, double shown) { EXPECT_NEAR(log, shown, 1e-6 + 1e-5 * std::fabs(shown)); }

TEST(ProgressLogCli, RowsOnTheLogGridWithTheSummarysLoss) {
  const std::string d = scratch_dir("progress_log");
  ASSERT_EQ(run_lepus(kAbalone + " --progress_log " + d + "/log.tsv 2> " + d + "/err.txt"), 0);
  const std::string err = read_file(d + "/err.txt");
  const auto rows = read_log(d + "/log.tsv");
  ASSERT_GE(rows.size(), 60u);
  int per_decade[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) {
      EXPECT_GT(rows[i].examples, rows[i - 1].examples);
    }
    if (i + 1 < rows.size()) {  // every row but the last is on the grid
      const double k = 20.0 * std::log10(static_cast<double>(rows[i].examples));
      bool on_grid = false;
      for (double j : {std::floor(k), std::ceil(k)})
        on_grid |= std::llround(std::pow(10.0, j / 20.0)) == static_cast<long long>(rows[i].examples);
      EXPECT_TRUE(on_grid) << rows[i].examples;
    }
    ++per_decade[static_cast<int>(std::log10(static_cast<double>(rows[i].examples)))];
    EXPECT_FALSE(rows[i].holdout);
  }
  EXPECT_EQ(per_decade[0], 9);   // 1 .. 9
  EXPECT_EQ(per_decade[1], 20);  // 10 .. 89
  EXPECT_EQ(per_decade[2], 20);  // 100 .. 891
  EXPECT_EQ(per_decade[3], 14);  // 1000 .. 3981, and the last row
  // The last row is the run's end, with the summary's figures.
  const LogRow& last = rows.back();
  EXPECT_EQ(last.examples, 4177u);
  EXPECT_EQ(static_cast<double>(last.examples), summary_value(err, "number of examples"));
  EXPECT_DOUBLE_EQ(last.weight, summary_value(err, "weighted example sum"));
  EXPECT_NEAR(last.average, summary_value(err, "average loss"), 5e-7);
  // Since-last covers the weight since the previous row: the pieces add up to the average.
  double loss = 0.0, weight = 0.0;
  for (const LogRow& r : rows) {
    loss += r.since_last * (r.weight - weight);
    weight = r.weight;
    EXPECT_NEAR(loss / weight, r.average, 1e-6 * std::max(1.0, r.average)) << r.examples;
  }
  // Rows where the table has one (-P 1: every example) show its average loss.
  ASSERT_EQ(run_lepus(kAbalone + " -P 1 --progress_log " + d + "/log_p1.tsv 2> " + d + "/err_p1.txt"), 0);
  const auto table = table_averages(read_file(d + "/err_p1.txt"));
  ASSERT_EQ(table.size(), 4177u);
  for (const LogRow& r : rows) expect_same_loss(r.average, table.at(r.examples));
  // -P and --quiet change the table, not the log.
  ASSERT_EQ(run_lepus(kAbalone + " --quiet --progress_log " + d + "/log_quiet.tsv"), 0);
  EXPECT_EQ(read_file(d + "/log_p1.tsv"), read_file(d + "/log.tsv"));
  EXPECT_EQ(read_file(d + "/log_quiet.tsv"), read_file(d + "/log.tsv"));
  std::filesystem::remove_all(d);
}

TEST(ProgressLogCli, TestOnlyRunLogsTheTestLoss) {
  const std::string d = scratch_dir("progress_log_t");
  ASSERT_EQ(run_lepus(kAbalone + " --quiet -f " + d + "/model"), 0);
  ASSERT_EQ(
      run_lepus(kAbalone + " -t -i " + d + "/model --progress_log " + d + "/log.tsv 2> " + d + "/err.txt"),
      0);
  const std::string err = read_file(d + "/err.txt");
  ASSERT_TRUE(has(err, "only testing")) << err;
  const auto rows = read_log(d + "/log.tsv");
  ASSERT_GE(rows.size(), 60u);
  EXPECT_EQ(rows.back().examples, 4177u);
  EXPECT_NEAR(rows.back().average, summary_value(err, "average loss"), 5e-7);
  std::filesystem::remove_all(d);
}

// With passes and holdout the table reports the held-out loss from pass 2 on ("h" rows): so does the log.
TEST(ProgressLogCli, HoldoutPassesFollowTheTable) {
  const std::string d = scratch_dir("progress_log_h");
  ASSERT_EQ(run_lepus(kAbalone + " --passes 3 --cache_file " + d + "/cache -P 1 --progress_log " + d +
                      "/log.tsv 2> " + d + "/err.txt"),
            0);
  const auto table = table_averages(read_file(d + "/err.txt"));
  const auto rows = read_log(d + "/log.tsv");
  ASSERT_FALSE(rows.empty());
  const uint64_t per_pass = 4177 - 4177 / 10;  // every 10th line held out, in every pass
  bool saw_holdout = false;
  for (const LogRow& r : rows) {
    SCOPED_TRACE(r.examples);
    EXPECT_EQ(r.holdout, r.examples > per_pass);
    saw_holdout |= r.holdout;
    ASSERT_TRUE(table.count(r.examples));
    expect_same_loss(r.average, table.at(r.examples));
  }
  EXPECT_TRUE(saw_holdout);
  EXPECT_EQ(rows.back().examples, table.rbegin()->first);
  std::filesystem::remove_all(d);
}

TEST(ProgressLogCli, BadPathFailsBeforeReading) {
  const std::string d = scratch_dir("progress_log_bad");
  EXPECT_EQ(run_lepus(kAbalone + " --progress_log " + d + "/no/such/dir/log.tsv 2> " + d + "/err.txt"), 1);
  const std::string err = read_file(d + "/err.txt");
  EXPECT_TRUE(has(err, "lepus: error: " + d + "/no/such/dir/log.tsv: cannot open for writing")) << err;
  EXPECT_FALSE(has(err, "finished run")) << err;
  // Never over an input.
  std::filesystem::copy_file(kAbalone, d + "/data.vw.gz");
  const std::string before = read_file(d + "/data.vw.gz");
  EXPECT_EQ(run_lepus(d + "/data.vw.gz --progress_log " + d + "/./data.vw.gz 2> " + d + "/err2.txt"), 1);
  EXPECT_TRUE(has(read_file(d + "/err2.txt"), "lepus never writes over what it reads"))
      << read_file(d + "/err2.txt");
  EXPECT_EQ(read_file(d + "/data.vw.gz"), before);
  std::filesystem::remove_all(d);
}

bool have_gnuplot() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }

TEST(ProgressLogCli, PlotDrawsTwoLogs) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (utl/setup installs gnuplot-nox)";
  const std::string d = scratch_dir("progress_plot");
  ASSERT_EQ(run_lepus(kAbalone + " --quiet --progress_log " + d + "/sgd.tsv"), 0);
  ASSERT_EQ(run_lepus(kAbalone + " --quiet --learner scinol-coord --progress_log " + d + "/scinol.tsv"), 0);
  const std::string plot = std::string(LEPUS_SOURCE_DIR) + "/utl/plot";
  ASSERT_EQ(std::system((plot + " -o " + d + "/out.png --title 'abalone' --logy " + d + "/sgd.tsv " + d +
                         "/scinol.tsv=scinol-coord 2> " + d + "/err.txt")
                            .c_str()),
            0)
      << read_file(d + "/err.txt");
  const std::string png = read_file(d + "/out.png");
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // A file that is no progress log is refused, and no PNG is left behind.
  for (const std::string& not_a_log : {std::string(LEPUS_TEST_DATA) + "/heart_scale.vw", kAbalone}) {
    EXPECT_NE(std::system((plot + " -o " + d + "/bad.png " + not_a_log + " 2> " + d + "/bad.txt").c_str()),
              0);
    EXPECT_TRUE(has(read_file(d + "/bad.txt"), "not a lepus --progress_log file"))
        << read_file(d + "/bad.txt");
  }
  EXPECT_FALSE(exists(d + "/bad.png"));
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus::e2e
