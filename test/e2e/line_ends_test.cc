// Line ends as users of each format expect them (issue 43 item 2): a classic Mac OS file (lines ended by a CR
// alone) is read as lines in VW text, libsvm and CSV, plain, gzip, zstd and on stdin, exactly as its LF copy;
// a CSV cell in quotes holding line ends is one record (RFC 4180, as Python's csv module reads it), and
// warnings after it still name the file's own lines.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;

// `lepus ARGS` on `input` (a data file, or "< file" for stdin): its predictions and stderr.
struct Outputs {
  std::string predictions, err;
};
Outputs run_on(const std::string& d, const std::string& input, const std::string& args,
               const std::string& tag) {
  const std::string p = d + "/" + tag + ".p", e = d + "/" + tag + ".e";
  EXPECT_EQ(run_lepus(args + " " + input + " -p " + p + " 2> " + e), 0) << read_file(e);
  return {read_file(p), read_file(e)};
}

TEST(LineEnds, ClassicMacFilesAreReadAsLines) {
  const std::string d = scratch_dir("mac_line_ends");
  const bool zstd = std::system("command -v zstd > /dev/null") == 0;
  struct Format {
    std::string name, make_lf, args;
  };
  const std::vector<Format> formats = {
      {"vw", "gzip -dc " + kData + "/vw/inputs/rcv1_small.vw.gz | head -300", "--loss_function logistic"},
      {"libsvm", "cat " + kData + "/heart_scale.libsvm", "--format libsvm --loss_function logistic"},
      {"csv", "cat " + kData + "/csv/cal_housing_slice.csv",
       "--format csv --label_column median_house_value --categorical ocean_proximity"},
  };
  for (const Format& f : formats) {
    const std::string lf = d + "/" + f.name + ".lf", cr = d + "/" + f.name + ".cr";
    ASSERT_EQ(std::system((f.make_lf + " > " + lf + " && tr '\\n' '\\r' < " + lf + " > " + cr).c_str()), 0);
    ASSERT_EQ(std::system(("gzip -c " + cr + " > " + cr + ".gz").c_str()), 0);
    if (zstd) {
      ASSERT_EQ(std::system(("zstd -q -c " + cr + " > " + cr + ".zst").c_str()), 0);
    }
    const Outputs want = run_on(d, lf, f.args, f.name + "_lf");
    const double examples = summary_value(want.err, "number of examples");
    ASSERT_GT(examples, 100.0) << want.err;
    std::vector<std::string> inputs = {cr, cr + ".gz", "< " + cr + ".gz"};
    if (zstd) inputs.push_back(cr + ".zst");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Outputs got = run_on(d, inputs[i], f.args, f.name + "_cr" + std::to_string(i));
      EXPECT_EQ(got.predictions, want.predictions) << f.name << " " << inputs[i];
      EXPECT_EQ(summary_value(got.err, "number of examples"), examples)
          << f.name << " " << inputs[i] << got.err;
      EXPECT_FALSE(has(got.err, "[warning]")) << got.err;
    }
  }
}

// A CSV text cell in quotes may hold line ends: the record is read whole, as the same row with spaces for its
// line ends, and a bad row after it is named by its own line of the file. An unterminated quote runs to the
// end of the input (as Python's csv module reads it): one warning naming the line where it opened.
TEST(LineEnds, CsvQuotedCellsHoldLineEnds) {
  const std::string d = scratch_dir("csv_records");
  std::ofstream(d + "/multi.csv") << "y,x,note\n1,2,\"good\nvery good\"\n-1,3,\"bad,\n\"\"awful\"\"\"\n"
                                     "1,4,plain\n-1,5\n1,6,\"fine\r\nagain\"\n";
  std::ofstream(d + "/flat.csv") << "y,x,note\n1,2,\"good very good\"\n-1,3,\"bad, \"\"awful\"\"\"\n"
                                    "1,4,plain\n-1,5\n1,6,\"fine  again\"\n";
  const std::string args = "--format csv --label_column y --text_columns note";
  const Outputs multi = run_on(d, d + "/multi.csv", args, "multi");
  const Outputs flat = run_on(d, d + "/flat.csv", args, "flat");
  EXPECT_EQ(multi.predictions, flat.predictions);
  EXPECT_EQ(summary_value(multi.err, "number of examples"), 4.0) << multi.err;
  EXPECT_EQ(summary_value(multi.err, "total feature number"),
            summary_value(flat.err, "total feature number"));
  EXPECT_TRUE(has(multi.err, d + "/multi.csv:7: row has 2 cells")) << multi.err;  // line 7 of the file, not 5
  EXPECT_EQ(summary_value(multi.err, "malformed input warnings"), 1.0) << multi.err;

  std::ofstream(d + "/open.csv") << "y,x\n1,2\n-1,\"3\n1,4\n-1,5\n";
  const Outputs open = run_on(d, d + "/open.csv", "--format csv", "open");
  EXPECT_TRUE(
      has(open.err, d + "/open.csv:3: unterminated quote in cell 1 ('x') (the quoted cell runs to the end "
                        "of the input)"))
      << open.err;
  EXPECT_EQ(summary_value(open.err, "number of examples"), 1.0) << open.err;
  // TSV quotes are ordinary bytes: every line is a row.
  std::ofstream(d + "/t.tsv") << "y\tx\n1\t\"2\n-1\t3\"\n";
  const Outputs tsv = run_on(d, d + "/t.tsv", "--format tsv --categorical x", "tsv");
  EXPECT_EQ(summary_value(tsv.err, "number of examples"), 2.0) << tsv.err;
}

}  // namespace
}  // namespace lepus::e2e
