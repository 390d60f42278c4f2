// CSV and TSV tables through the binary: header, label and column options, text columns, bad rows, models.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kCsv = LEPUS_TEST_DATA "/csv";

TEST(Csv, CalHousingTrainsWithCategoricalAndEmptyCells) {
  const std::string d = scratch_dir("csv_cal");
  ASSERT_EQ(run_lepus("--format csv -d " + kCsv +
                      "/cal_housing_slice.csv --label_column median_house_value "
                      "--categorical ocean_proximity -p " +
                      d + "/p 2> " + d + "/e"),
            0);
  const std::string e = read_file(d + "/e");
  EXPECT_EQ(summary_value(e, "number of examples"), 200.0) << e;  // the header is not an example
  EXPECT_EQ(e.find("[warning]"), std::string::npos) << e;
  // 10 columns: 9 features (one of them "ocean_proximity=...") and the constant; 2 rows lack total_bedrooms.
  EXPECT_EQ(summary_value(e, "total feature number"), 200.0 * 10 - 2) << e;
  EXPECT_EQ(lines_of(read_file(d + "/p")).size(), 200u);
}

TEST(Csv, NoHeaderLabelLastWithTextLabels) {
  const std::string d = scratch_dir("csv_magic");
  ASSERT_EQ(run_lepus("--format csv --no_header -d " + kCsv +
                      "/magic04_slice.csv --label_column -1 "
                      "--positive_label g --loss_function logistic 2> " +
                      d + "/e"),
            0);
  const std::string e = read_file(d + "/e");
  EXPECT_EQ(summary_value(e, "number of examples"), 191.0) << e;  // the first row is data
  EXPECT_EQ(e.find("[warning]"), std::string::npos) << e;
  EXPECT_LT(summary_value(e, "average loss"), summary_value(e, "best constant's loss"));
}

TEST(Tsv, SmsSpamTextColumnLearns) {
  const std::string d = scratch_dir("tsv_sms");
  ASSERT_EQ(run_lepus("--format tsv --no_header -d " + kCsv +
                      "/sms_spam_slice.tsv --label_column 0 "
                      "--positive_label spam --text_columns 1 --loss_function logistic 2> " +
                      d + "/e"),
            0);
  const std::string e = read_file(d + "/e");
  EXPECT_EQ(summary_value(e, "number of examples"), 300.0);
  EXPECT_LT(summary_value(e, "average loss"), 0.8 * summary_value(e, "best constant's loss")) << e;
}

TEST(Csv, BadRowsWarnWithTheirLineOrStopUnderStrict) {
  const std::string d = scratch_dir("csv_bad");
  std::ofstream(d + "/t.csv") << "y,a,b\n1,2,3\n-1,2\n1,\"x,3\n-1,4,5\n";
  ASSERT_EQ(run_lepus("--format csv -d " + d + "/t.csv 2> " + d + "/e"), 0);
  const std::string e = read_file(d + "/e");
  EXPECT_NE(e.find(d + "/t.csv:3: row has 2 cells"), std::string::npos) << e;
  EXPECT_NE(e.find(d + "/t.csv:4: unterminated quote"), std::string::npos) << e;
  EXPECT_EQ(summary_value(e, "number of examples"), 1.0);  // the quoted cell runs to the end (RFC 4180)
  EXPECT_EQ(summary_value(e, "malformed input warnings"), 2.0);
  EXPECT_EQ(run_lepus("--format csv -d " + d + "/t.csv --strict_parse 2> " + d + "/e2"), 1);
  EXPECT_NE(lines_of(read_file(d + "/e2")).back().find("t.csv:3: row has 2 cells"), std::string::npos);
  // An unknown column is a configuration error naming it.
  EXPECT_EQ(run_lepus("--format csv -d " + d + "/t.csv --label_column nope 2> " + d + "/e3"), 1);
  EXPECT_NE(read_file(d + "/e3").find("nope"), std::string::npos);
  EXPECT_EQ(read_file(d + "/e3").find("no header row"), std::string::npos);  // a real header: no hint
}

// A file without a header row read with --csv: the message says the first row was read as the header and names
// the flag that reads it as data.
TEST(Csv, HeaderlessFileNamesTheNoHeaderFlag) {
  const std::string d = scratch_dir("csv_no_header");
  std::ofstream(d + "/t.csv") << "3.6216,8.6661,-2.8073,0\n4.5459,8.1674,-2.4586,1\n";
  EXPECT_EQ(run_lepus("--csv -d " + d + "/t.csv 2> " + d + "/e"), 1);
  const std::string e = read_file(d + "/e");
  EXPECT_TRUE(has(e, "first row was read as the header")) << e;
  EXPECT_TRUE(has(e, "--csv_no_file_header")) << e;
  EXPECT_EQ(lines_of(e).size(), 1u) << e;
}

TEST(Csv, ModelRestoresTheTableOptions) {
  const std::string d = scratch_dir("csv_model");
  const std::string data = " --format csv --no_header -d " + kCsv + "/magic04_slice.csv";
  ASSERT_EQ(run_lepus(data + " --label_column -1 --positive_label g --loss_function logistic -f " + d +
                      "/m --quiet"),
            0);
  ASSERT_EQ(run_lepus(data + " -t -i " + d + "/m -p " + d + "/a --quiet"), 0);
  ASSERT_EQ(run_lepus(data + " -t -i " + d + "/m --label_column -1 -p " + d + "/b --quiet"), 0);
  EXPECT_EQ(read_file(d + "/a"), read_file(d + "/b"));
  EXPECT_EQ(lines_of(read_file(d + "/a")).size(), 191u);
  EXPECT_EQ(run_lepus(data + " -t -i " + d + "/m --label_column 0 2> " + d + "/e"), 1);
  EXPECT_NE(read_file(d + "/e").find("conflicts with the model's --label_column -1"), std::string::npos);
}

// Each of the eight real tables of the CSV issue trains from its raw shared file with one command.
struct Table {
  std::string name, file, args;
};
class SharedTables : public ::testing::TestWithParam<Table> {};
TEST_P(SharedTables, TrainsFromTheRawFile) {
  const std::string path = LEPUS_SHARED_DIR "/data/" + GetParam().file;
  if (!exists(path)) GTEST_SKIP() << "no " << path;
  const std::string d = scratch_dir("table_" + GetParam().name);
  ASSERT_EQ(run_lepus("-d " + path + " " + GetParam().args + " 2> " + d + "/e"), 0) << read_file(d + "/e");
  const std::string e = read_file(d + "/e");
  EXPECT_EQ(e.find("[warning]"), std::string::npos) << e;
  EXPECT_GT(summary_value(e, "number of examples"), 500.0);
  const double bc = summary_value(e, "best constant's loss");
  if (!std::isnan(bc)) {
    EXPECT_LT(summary_value(e, "average loss"), bc) << GetParam().name;
  }
}
INSTANTIATE_TEST_SUITE_P(
    Issue5, SharedTables,
    ::testing::Values(
        Table{"cal_housing", "cal_housing/housing.csv.gz",
              "--format csv --label_column median_house_value --categorical ocean_proximity"},
        Table{"magic04", "magic04/magic04.data.gz",
              "--format csv --no_header --label_column -1 --positive_label g --loss_function logistic"},
        Table{"higgs", "higgs/higgs_lgbm_binary.train.tsv.gz",
              "--format tsv --no_header --label_column 0 --positive_label 1 --loss_function logistic"},
        Table{"avazu", "avazu/avazu_first9k_train.csv.gz",
              "--format csv --label_column click --ignore_columns id --categorical "
              "hour,C1,banner_pos,device_type,"
              "device_conn_type,C14,C15,C16,C17,C18,C19,C20,C21 --positive_label 1 --loss_function logistic"},
        Table{"yearpredictionmsd", "yearpredictionmsd/millionsong_cs190.csv.gz",
              "--format csv --no_header --label_column 0"},
        Table{"wdbc", "wdbc/wdbc_with_header.csv",
              "--format csv --ignore_columns ID_number --label_column Diagnosis --positive_label M "
              "--loss_function logistic"},
        Table{"banknote", "banknote/data_banknote_authentication.txt",
              "--format csv --no_header --label_column -1 --positive_label 1 --loss_function logistic"},
        Table{"sms_spam", "sms_spam/SMSSpamCollection",
              "--format tsv --no_header --label_column 0 --positive_label spam --text_columns 1 "
              "--loss_function logistic"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace lepus::e2e
