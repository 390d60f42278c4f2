// read_vw_float against a literal transcription of VW 9.11.2's parse_float.
#include "formats/float_reader.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace lepus {
namespace {

struct Read {
  float value;
  size_t consumed;
};

Read read(std::string_view s) {
  const char* stop = nullptr;
  const float v = read_vw_float(s.data(), s.data() + s.size(), &stop);
  return Read{v, static_cast<size_t>(stop - s.data())};
}

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// VW's parse_float as written in vw/core/parse_primitives.h, kept deliberately naive (every digit in f32, the
// power table rebuilt by loops) so it checks the optimized reader rather than sharing its code. It needs a
// NUL-terminated buffer, as VW's own code does.
float reference_pow10(int e) {
  if (e > 38) return INFINITY;
  if (e < -37) return 0.0f;
  float r = 1.0f;
  if (e >= 0) {
    for (int i = 0; i < e; ++i) r = r * 10.0f;
  } else {
    for (int i = 0; i < -e; ++i) r = r / 10.0f;
  }
  return r;
}

float reference_parse(const std::string& text, size_t& end_idx) {
  const char* p = text.c_str();
  const char* start = p;
  const char* end_line = p + text.size();
  end_idx = 0;
  if (!*p) return 0;
  int s = 1;
  while (*p == ' ' && p < end_line) p++;
  if (*p == '-') {
    s = -1;
    p++;
  }
  float acc = 0;
  while (*p >= '0' && *p <= '9' && p < end_line) acc = acc * 10 + *p++ - '0';
  int num_dec = 0;
  if (*p == '.') {
    while (*(++p) >= '0' && *p <= '9' && p < end_line) {
      if (num_dec < 35) {
        acc = acc * 10 + (*p - '0');
        num_dec++;
      }
    }
  }
  long long exp_acc = 0;  // VW truncates to int8 below; lepus reads an exponent that changes as out of range
  if ((*p == 'e' || *p == 'E') && p < end_line) {
    p++;
    int exp_s = 1;
    if (*p == '-' && p < end_line) {
      exp_s = -1;
      p++;
    }
    while (*p >= '0' && *p <= '9' && p < end_line) {
      if (exp_acc < 100000) exp_acc = exp_acc * 10 + (*p - '0');
      p++;
    }
    exp_acc *= exp_s;
  }
  if (*p == ' ' || *p == '\n' || *p == '\t' || p == end_line) {
    const long long e = exp_acc - num_dec;
    end_idx = static_cast<size_t>(p - start);
    if (e > 127 || e < -128)  // beyond float range (VW's int8 truncation would wrap it)
      return static_cast<float>(s) * (e > 0 && acc != 0 ? std::numeric_limits<float>::infinity() : 0.0f);
    acc *= reference_pow10(static_cast<int8_t>(e));
    end_idx = static_cast<size_t>(p - start);
    return static_cast<float>(s) * acc;
  }
  char* end = nullptr;
  const float ret = std::strtof(start, &end);
  if (end >= start) end_idx = static_cast<size_t>(end - start);
  return ret;
}

TEST(FloatReader, CompatDocExamples) {
  EXPECT_TRUE(std::isinf(read("1e400").value));  // beyond float range (VW's int8 truncation reads 0)
  EXPECT_EQ(read("1e400").consumed, 5u);
  EXPECT_EQ(read("0x10").value, 16.0f);
  EXPECT_EQ(read("0x10").consumed, 4u);
  EXPECT_EQ(read("+3").value, 3.0f);
  EXPECT_EQ(read("+3").consumed, 2u);
  EXPECT_EQ(read("1E+2").value, 100.0f);
  EXPECT_EQ(read("1E+2").consumed, 4u);
  EXPECT_TRUE(std::isinf(read("inf").value));
  EXPECT_GT(read("inf").value, 0.0f);
  EXPECT_EQ(read("inf").consumed, 3u);
  EXPECT_TRUE(std::isinf(read("-inf").value));
  EXPECT_LT(read("-inf").value, 0.0f);
  EXPECT_TRUE(std::isnan(read("nan").value));
  EXPECT_EQ(read("nan").consumed, 3u);
}

// VW truncates the exponent to int8 (1e256 reads as 1); lepus reads an exponent that truncation would change as
// beyond float range: infinity above (malformed to every caller), 0 below. Within int8 it is VW's reading.
TEST(FloatReader, ExponentBeyondInt8IsOutOfRange) {
  EXPECT_TRUE(std::isinf(read("1e256").value));
  EXPECT_TRUE(std::isinf(read("1e300").value));
  EXPECT_TRUE(std::isinf(read("-1e256").value));
  EXPECT_LT(read("-1e256").value, 0.0f);
  EXPECT_TRUE(std::isinf(read("1e99999999999999").value));
  EXPECT_EQ(read("1e-200").value, 0.0f);
  EXPECT_EQ(read("0e300").value, 0.0f);
  EXPECT_TRUE(std::isinf(read("1e127").value));  // in int8, above the table: infinity as in VW
  EXPECT_EQ(read("1e38").value, reference_pow10(38));
  EXPECT_TRUE(std::isinf(read("1e39").value));
  EXPECT_EQ(read("1e-37").value, reference_pow10(-37));
  EXPECT_EQ(read("1e-38").value, 0.0f);  // below the table: 0, not a denormal
  EXPECT_EQ(read("2.5e-3").value, 25.0f * reference_pow10(-4));
}

TEST(FloatReader, FastPathIsVwsNotStrtof) {
  // 1 * (1/10/10/10/10/10/10 in f32) is an ulp-level away from the correctly rounded 1e-6.
  const Read r = read("0.000001");
  EXPECT_EQ(bits(r.value), bits(1.0f * reference_pow10(-6)));
  EXPECT_NE(bits(r.value), bits(std::strtof("0.000001", nullptr)));
  EXPECT_EQ(r.value, 9.99999884e-07f);
  // Integer digits take two f32 roundings in VW (`acc * 10 + '6'` then `- '0'`): 33554386 reads as 33554384.
  EXPECT_EQ(read("33554386").value, 33554384.0f);
  EXPECT_EQ(read("33554390").value, 33554392.0f);
  // Decimal digits take one rounding.
  EXPECT_EQ(bits(read("0.15").value), bits(15.0f * reference_pow10(-2)));
  EXPECT_EQ(bits(read("-6.2699720e-02").value), bits(-(62699720.0f * reference_pow10(-9))));
}

TEST(FloatReader, OnlyThirtyFiveDecimalsCount) {
  const std::string long_fraction = "0." + std::string(34, '0') + "1" + "99999";
  const Read r = read(long_fraction);
  EXPECT_EQ(r.consumed, long_fraction.size());
  EXPECT_EQ(bits(r.value), bits(1.0f * reference_pow10(-35)));
}

TEST(FloatReader, StopPositions) {
  EXPECT_EQ(read("1.5 x").consumed, 3u);
  EXPECT_EQ(read("1.5\tx").consumed, 3u);
  EXPECT_EQ(read("1.5|f").consumed, 3u);  // strtof path
  EXPECT_EQ(read("1.5|f").value, 1.5f);
  EXPECT_EQ(read("2,5").consumed, 1u);
  EXPECT_EQ(read("2,5").value, 2.0f);
  EXPECT_EQ(read("  7").consumed, 3u);  // leading spaces are part of the number
  EXPECT_EQ(read("  7").value, 7.0f);
  EXPECT_EQ(read("  ").consumed, 2u);  // only spaces: the fast path reads 0
  EXPECT_EQ(read("1e").value, 1.0f);
  EXPECT_EQ(read("1e").consumed, 2u);
  EXPECT_EQ(read("e").consumed, 1u);  // VW quirk: a lone 'e' is the number 0
  EXPECT_EQ(read("e").value, 0.0f);
  const Read minus = read("-");
  EXPECT_EQ(minus.consumed, 1u);
  EXPECT_TRUE(std::signbit(minus.value));
  // Reading stops at `end`, not at a NUL.
  const std::string digits = "12345";
  const char* stop = nullptr;
  EXPECT_EQ(read_vw_float(digits.data(), digits.data() + 2, &stop), 12.0f);
  EXPECT_EQ(stop, digits.data() + 2);
}

TEST(FloatReader, NothingConsumed) {
  for (const std::string_view s :
       {std::string_view(""), std::string_view("abc"), std::string_view("\t5"), std::string_view("|f"),
        std::string_view(" e:x"), std::string_view("-x")}) {
    SCOPED_TRACE(std::string(s));
    const Read r = read(s);
    EXPECT_EQ(r.consumed, 0u);
    EXPECT_EQ(r.value, 0.0f);
  }
  const std::string with_nul(
      "\0"
      "5",
      2);
  EXPECT_EQ(read(with_nul).consumed, 0u);
}

TEST(FloatReader, LongStrtofLiteral) {
  // Longer than the stack copy: the digits far out still decide the rounding.
  const std::string text = "+1." + std::string(200, '0') + "1e0x";
  const Read r = read(text);
  EXPECT_EQ(r.value, 1.0f);
  EXPECT_EQ(r.consumed, text.size() - 1);
}

TEST(FloatReader, MatchesVwTranscriptionOnRandomText) {
  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789999.-eE+ x\t|:";
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 14);
  std::uniform_int_distribution<int> digits(1, 12);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    if (i % 2 == 0) {
      // Mostly well-formed numbers, to exercise the fast path and long mantissas.
      if (rng() % 4 == 0) text += '-';
      for (int d = digits(rng); d > 0; --d) text += static_cast<char>('0' + rng() % 10);
      if (rng() % 2) {
        text += '.';
        if (rng() % 8 == 0) text += std::string(rng() % 45, '0');  // around VW's 35-decimal limit
        for (int d = digits(rng); d > 0; --d) text += static_cast<char>('0' + rng() % 10);
      }
      if (rng() % 3 == 0) text += (rng() % 2 ? "e-" : "e") + std::to_string(rng() % 45);
    } else {
      for (int n = length(rng); n > 0; --n) text += alphabet[pick(rng)];
    }
    size_t expected_consumed = 0;
    const float expected = reference_parse(text, expected_consumed);
    const Read r = read(text);
    SCOPED_TRACE(text);
    ASSERT_EQ(r.consumed, expected_consumed);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(r.value));
    } else {
      ASSERT_EQ(bits(r.value), bits(expected));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 200000);
}

// ---- read_vw_float_fast: the whole-token path, held to read_vw_float -------------------------------------------

// The text in quotes, for traces (built by append: GCC 12 warns spuriously about "'" + std::string).
std::string quoted(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out += '\'';
  return out;
}

// What the fast path says about text: taken (stop and bits equal to read_vw_float's) or declined.
struct FastRead {
  bool taken;
  float value;
  size_t consumed;
};

FastRead read_fast(std::string_view s) {
  float v = -12345.0f;
  const char* stop = read_vw_float_fast(s.data(), s.data() + s.size(), &v);
  if (stop == nullptr) {
    EXPECT_EQ(v, -12345.0f) << "a declined read leaves the value alone";
    return FastRead{false, 0.0f, 0};
  }
  return FastRead{true, v, static_cast<size_t>(stop - s.data())};
}

// The contract: wherever the fast path answers, it answers exactly as read_vw_float (same stop, same bits).
void expect_fast_matches_general(std::string_view text) {
  SCOPED_TRACE(quoted(text));
  const FastRead f = read_fast(text);
  if (!f.taken) return;
  const Read r = read(text);
  EXPECT_EQ(f.consumed, r.consumed);
  EXPECT_EQ(bits(f.value), bits(r.value));
}

TEST(FloatReaderFast, TakesTheCommonShapes) {
  // rcv1's %.7e values, plain decimals and integers, each followed by what ends a VW feature.
  for (const std::string_view s : {"6.2699720e-02", "-6.2699720e-02", "1.0517266e-01", "0.5", "5", "12345",
                                   "-3.25", "1e5", "2.5E-3", ".5", "5.", "-0", "0.000001", "007", "1e-45",
                                   "9.9999999e0", "1234567.1234567", "0.000000000000000001"}) {
    for (const std::string_view after : {"", " x", "\tx", "\n"}) {
      const std::string text = std::string(s) + std::string(after);
      SCOPED_TRACE(quoted(text));
      const FastRead f = read_fast(text);
      ASSERT_TRUE(f.taken);
      const Read r = read(text);
      EXPECT_EQ(f.consumed, r.consumed);
      EXPECT_EQ(f.consumed, s.size());
      EXPECT_EQ(bits(f.value), bits(r.value));
    }
  }
  // Digits past 2^24 take VW's f32 steps, not a correct rounding (see FastPathIsVwsNotStrtof).
  EXPECT_EQ(bits(read_fast("-6.2699720e-02").value), bits(-(62699720.0f * reference_pow10(-9))));
  EXPECT_EQ(bits(read_fast("0.000001").value), bits(9.99999884e-07f));
}

TEST(FloatReaderFast, DeclinesWhatOnlyTheGeneralReaderKnows) {
  // strtof's shapes, VW's odd zeros, leading spaces, numbers ending in another char, more than 19 digits,
  // exponents beyond int8, integer digits whose f32 steps round: all left to read_vw_float.
  for (const std::string_view s : {"",
                                   "+1",
                                   "+3",
                                   " 7",
                                   "  ",
                                   "0x10",
                                   "inf",
                                   "-inf",
                                   "nan",
                                   "NaN",
                                   "1E+2",
                                   "1e+2",
                                   "-",
                                   ".",
                                   "-.",
                                   "e",
                                   "e5",
                                   "-e5",
                                   "1.5|f",
                                   "2,5",
                                   "1.5x",
                                   "1:2",
                                   "1.5\r",
                                   "1e400",
                                   "1e256",
                                   "1e-200",
                                   "0e300",
                                   "33554386",
                                   "123456789012345678901",
                                   "0.12345678901234567890",
                                   "\0"
                                   "5",
                                   "1\v",
                                   "\xC2\xA0"
                                   "1",
                                   "\xEF\xBC\x91"}) {
    SCOPED_TRACE(quoted(s));
    EXPECT_FALSE(read_fast(s).taken);
  }
}

TEST(FloatReaderFast, TrickyTokensMatchTheGeneralReader) {
  for (const std::string_view s : {"-0",
                                   "-0.0",
                                   "0",
                                   "00",
                                   "007",
                                   "-007.500",
                                   "1e-45",
                                   "1.4e-45",
                                   "1e-38",
                                   "1e-37",
                                   "1e38",
                                   "1e39",
                                   "3.4e38",
                                   "3.5e38",
                                   "-3.5e38",
                                   "4294967296",
                                   "4294967295",
                                   "18446744073709551615",
                                   "18446744073709551616",
                                   "9999999999999999999",
                                   "16777216",
                                   "16777215",
                                   "16777217",
                                   "16777168",
                                   "16777169",
                                   "1.6777216",
                                   "0.16777217",
                                   "99999999.9",
                                   "9.99999999",
                                   "0.000000016777217",
                                   ".5",
                                   "5.",
                                   "-.5",
                                   "-5.",
                                   "1e",
                                   "1e-",
                                   "1E",
                                   "1.e5",
                                   ".1e1",
                                   "5e0005",
                                   "5e999999",
                                   "5e-999999",
                                   "5e1000000",
                                   "1e127",
                                   "1e-128",
                                   "1e-129",
                                   "0.00000000000000000000000000000000001",
                                   "12345678.9",
                                   "1234567.89",
                                   "123456.789",
                                   "0.123456789"}) {
    for (const std::string_view after : {"", " ", "\t", "\n", "x", "|", ":"}) {
      expect_fast_matches_general(std::string(s) + std::string(after));
    }
  }
}

TEST(FloatReaderFast, MatchesTheGeneralReaderOnRandomNumbers) {
  std::mt19937 rng(2024);
  const std::string alphabet = "0123456789.-eE+ \tx";
  int taken = 0;
  for (int i = 0; i < 300000; ++i) {
    std::string text;
    switch (i % 3) {
      case 0: {  // well formed: the fast path's own shapes, with long mantissas and leading zeros
        if (rng() % 3 == 0) text += '-';
        for (int d = static_cast<int>(rng() % 12); d > 0; --d) text += static_cast<char>('0' + rng() % 10);
        if (rng() % 2) {
          text += '.';
          if (rng() % 6 == 0) text += std::string(rng() % 12, '0');
          for (int d = static_cast<int>(rng() % 12); d > 0; --d) text += static_cast<char>('0' + rng() % 10);
        }
        if (rng() % 3 == 0) {
          text += rng() % 2 ? 'e' : 'E';
          if (rng() % 2) text += '-';
          text += std::to_string(rng() % (rng() % 4 == 0 ? 200 : 40));
        }
        text += rng() % 4 == 0 ? "" : " ";
        break;
      }
      case 1: {  // %.7e-like, the benchmark's shape
        char buf[32];
        const float x =
            std::ldexp(static_cast<float>(rng() % 1000000 + 1), static_cast<int>(rng() % 60) - 40);
        std::snprintf(buf, sizeof buf, "%.7e", static_cast<double>(rng() % 2 ? x : -x));
        text = buf;
        break;
      }
      default:
        for (int n = static_cast<int>(rng() % 15); n > 0; --n) text += alphabet[rng() % alphabet.size()];
    }
    const FastRead f = read_fast(text);
    if (!f.taken) continue;
    ++taken;
    const Read r = read(text);
    SCOPED_TRACE(quoted(text));
    ASSERT_EQ(f.consumed, r.consumed);
    ASSERT_EQ(bits(f.value), bits(r.value));
  }
  EXPECT_GT(taken, 100000);  // the fast path is exercised, not merely declined
}

TEST(FloatReaderFast, NeverReadsPastTheEnd) {
  // The number's text is a prefix of a longer buffer: the answer must not depend on what follows `end`.
  const std::string buffer = "6.2699720e-0212345";
  for (size_t n = 0; n <= 13; ++n) {
    SCOPED_TRACE(n);
    float v = 0.0f;
    const char* stop = read_vw_float_fast(buffer.data(), buffer.data() + n, &v);
    const std::string alone = buffer.substr(0, n);
    const FastRead f = read_fast(alone);
    ASSERT_EQ(stop != nullptr, f.taken);
    if (stop != nullptr) {
      EXPECT_EQ(static_cast<size_t>(stop - buffer.data()), f.consumed);
      EXPECT_EQ(bits(v), bits(f.value));
    }
  }
}

// The paired SSE2 digit conversion gives what two scalar ones give, for every pair of lengths, whatever bytes
// follow the digits (a borrow from a byte below '0' must not reach the digits).
TEST(Digits8, ValuesOfFirst2IsTwoValueOfFirst) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 20000; ++round) {
    for (int ka = 1; ka <= 8; ++ka) {
      const int kb = 1 + round % 8;
      char a[8], b[8];
      for (int i = 0; i < 8; ++i) {
        a[i] = i < ka ? static_cast<char>('0' + rng() % 10) : static_cast<char>(rng() % 256);
        b[i] = i < kb ? static_cast<char>('0' + rng() % 10) : static_cast<char>(rng() % 256);
      }
      uint64_t va = 0, vb = 0;
      digits8::values_of_first2(digits8::load(a), ka, digits8::load(b), kb, va, vb);
      ASSERT_EQ(va, digits8::value_of_first(digits8::load(a), ka)) << ka;
      ASSERT_EQ(vb, digits8::value_of_first(digits8::load(b), kb)) << kb;
    }
  }
  uint64_t va = 0, vb = 0;  // the largest values
  digits8::values_of_first2(digits8::load("99999999"), 8, digits8::load("12345678"), 8, va, vb);
  EXPECT_EQ(va, 99999999u);
  EXPECT_EQ(vb, 12345678u);
}

}  // namespace
}  // namespace lepus
