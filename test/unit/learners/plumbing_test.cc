// learners/common/plumbing.h: what every learner shares. Here the exact numbers of a readable model.
#include "learners/common/plumbing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

namespace lepus {
namespace {

template <class T>
std::string exact(T v) {
  std::ostringstream out;
  common::imbue_exact_numbers(out);
  out << v;
  return out.str();
}

// Each number is written in the shortest form that reads back to it: a float as the float it is, a double in up
// to 17 digits, where the stream's default 6 digits lose both.
TEST(ExactNumbers, ShortestTextThatReadsBack) {
  EXPECT_EQ(exact(0.1f), "0.1");
  EXPECT_EQ(exact(0.1), "0.1");
  EXPECT_EQ(exact(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(exact(static_cast<float>(1.0 / 3.0)), "0.33333334");
  EXPECT_EQ(exact(12.0), "12");
  EXPECT_EQ(exact(1e-300), "1e-300");
  EXPECT_EQ(exact(123456789.0), "123456789");
  EXPECT_EQ(exact(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(exact(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(exact(std::nan("")), "nan");
  EXPECT_EQ(exact(uint64_t{12345678901234}), "12345678901234");  // integers as before
  for (const double v : {0.1 + 0.2, 2.0 / 7.0, 1e308 / 3.0, -4.9e-324, 6.02214076e23}) {
    const std::string s = exact(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  for (const float v : {0.7f, 1.0f / 3.0f, 3.4e38f, 1e-45f, -2.5e-10f}) {
    const std::string s = exact(v);
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), v) << s;
  }
}

// The stream keeps everything else: text, widths of text, and other streams are untouched.
TEST(ExactNumbers, OnlyTheImbuedStreamChanges) {
  std::ostringstream plain;
  plain << 1.0 / 3.0;
  EXPECT_EQ(plain.str(), "0.333333");
  std::ostringstream out;
  common::imbue_exact_numbers(out);
  out << "w " << 0.25 << " n " << 3 << " " << true;
  EXPECT_EQ(out.str(), "w 0.25 n 3 1");
}

}  // namespace
}  // namespace lepus
