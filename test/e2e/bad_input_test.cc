// The bad-input corpus (test/bad_input): every hostile file has its expected outcome, lenient and strict, and
// none crashes, hangs or yields a non-finite prediction. Large cases are generated here.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kBad = LEPUS_SOURCE_DIR "/test/bad_input";

struct Case {
  std::string file, args;
  int exit_status = 0;
  std::string examples, must_contain, warnings;
  int strict_exit = 0;
};

std::vector<Case> manifest() {
  std::vector<Case> out;
  for (const auto& l : lines_of(read_file(kBad + "/manifest.tsv"))) {
    if (l.empty() || l[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string cell;
    while (std::getline(ss, cell, '\t')) f.push_back(cell);
    f.resize(7);
    out.push_back(Case{f[0], f[1], std::stoi(f[2]), f[3], f[4], f[5], std::stoi(f[6])});
  }
  return out;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

class BadInputCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(BadInputCorpus, HasItsExpectedOutcome) {
  const Case& c = GetParam();
  const std::string d = scratch_dir("bad_" + c.file);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(run_lepus("-d " + kBad + "/" + c.file + " " + c.args + " -p " + d + "/p.txt 2> " + d + "/e.txt"),
            c.exit_status);
  const std::string err = read_file(d + "/e.txt");
  if (!c.examples.empty()) {
    EXPECT_EQ(summary_value(err, "number of examples"), std::stod(c.examples)) << err;
  }
  if (!c.must_contain.empty()) {
    EXPECT_NE(err.find(c.must_contain), std::string::npos) << err;
  }
  const double warnings = summary_value(err, "malformed input warnings");
  EXPECT_EQ(std::isnan(warnings) ? 0.0 : warnings, std::stod(c.warnings)) << err;
  for (double v : read_predictions(d + "/p.txt")) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(
      run_lepus("-d " + kBad + "/" + c.file + " " + c.args + " --strict_parse --quiet 2> " + d + "/s.txt"),
      c.strict_exit);
  if (c.strict_exit == 1) {
    const auto lines = lines_of(read_file(d + "/s.txt"));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].rfind("lepus: error: " + kBad + "/" + c.file + ":", 0), 0u) << lines[0];
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

INSTANTIATE_TEST_SUITE_P(Manifest, BadInputCorpus, ::testing::ValuesIn(manifest()), [](const auto& info) {
  std::string n = info.param.file;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(BadInput, FiftyMegabyteLine) {
  const std::string d = scratch_dir("bad_50mb");
  {
    std::ofstream f(d + "/big.vw");
    f << "1 |f a\n-1 |f ";
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 50; ++i) f << chunk;
    f << "\n1 |f b\n";
  }
  // Read by default (a 50 MB name is one feature) ...
  ASSERT_EQ(run_lepus("-d " + d + "/big.vw 2> " + d + "/e"), 0);
  EXPECT_EQ(summary_value(read_file(d + "/e"), "number of examples"), 3.0);
  // ... and refused, naming the line, under a smaller limit.
  EXPECT_EQ(run_lepus("-d " + d + "/big.vw --max_line_bytes 10M 2> " + d + "/e2"), 1);
  EXPECT_NE(read_file(d + "/e2").find("big.vw:2: line longer than"), std::string::npos);
}

TEST(BadInput, MillionFeaturesOnOneLine) {
  const std::string d = scratch_dir("bad_1m");
  {
    std::ofstream f(d + "/wide.vw");
    f << "1 |f";
    for (int i = 0; i < 1000000; ++i) f << " x" << i << ":0.5";
    f << "\n-1 |f a\n";
  }
  ASSERT_EQ(run_lepus("-d " + d + "/wide.vw -p " + d + "/p 2> " + d + "/e"), 0);
  EXPECT_EQ(summary_value(read_file(d + "/e"), "total feature number"), 1000001.0 + 2.0);
  for (double v : read_predictions(d + "/p")) EXPECT_TRUE(std::isfinite(v));
}

TEST(BadInput, StdinClosedEarlyAndMidLine) {
  const std::string d = scratch_dir("bad_stdin");
  EXPECT_EQ(run_lepus("< /dev/null 2> " + d + "/e"), 0);
  EXPECT_EQ(summary_value(read_file(d + "/e"), "number of examples"), 0.0);
  // The writer stops in the middle of a line: the partial line is the last example.
  std::ofstream(d + "/partial.vw") << "1 |f a\n-1 |f b c";
  EXPECT_EQ(
      std::system(("cat " + d + "/partial.vw | " + LEPUS_BINARY + " -p " + d + "/p 2> " + d + "/e2").c_str()),
      0);
  EXPECT_EQ(summary_value(read_file(d + "/e2"), "number of examples"), 2.0);
  EXPECT_EQ(lines_of(read_file(d + "/p")).size(), 2u);
}

TEST(BadInput, DirectoryOrUnreadableFileAsData) {
  const std::string d = scratch_dir("bad_dir");
  EXPECT_EQ(run_lepus("-d " + d + " 2> " + d + "/e"), 1);
  EXPECT_NE(read_file(d + "/e").find("is a directory"), std::string::npos);
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  std::ofstream(d + "/locked.vw") << "1 |f a\n";
  ::chmod((d + "/locked.vw").c_str(), 0);
  EXPECT_EQ(run_lepus("-d " + d + "/locked.vw 2> " + d + "/e2"), 1);
  EXPECT_NE(read_file(d + "/e2").find("cannot open data file"), std::string::npos);
}

// A warning quotes the input safely for a terminal (issue 43 item 2): bytes that are not valid UTF-8, and the
// C1 control U+009B (a terminal's CSI), become \xNN; valid UTF-8 (a name in any script) is quoted as it is.
TEST(BadInput, WarningsNeverSendRawBytesToTheTerminal) {
  const std::string d = scratch_dir("bad_bytes");
  std::ofstream(d + "/b.vw") << "\xff\x9b"
                                "1 |a b:1\n\xc3\xa9"
                                "1 |a c:1\n\xc2\x9b"
                                "1 |a c:1\n";
  ASSERT_EQ(run_in(d, "-d b.vw 2> e"), 0);
  const std::string e = read_file(d + "/e");
  EXPECT_TRUE(has(e, "'\\xff\\x9b1' is not a good float")) << e;
  EXPECT_TRUE(has(e,
                  "'\xc3\xa9"
                  "1' is not a good float"))
      << e;
  EXPECT_TRUE(has(e, "'\\xc2\\x9b1' is not a good float")) << e;
  EXPECT_FALSE(has(e, "\xff")) << e;
  EXPECT_FALSE(has(e, "\x9b")) << e;
}

}  // namespace
}  // namespace lepus::e2e
