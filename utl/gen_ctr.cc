// gen_ctr: writes a deterministic, seeded, CTR-like click log in VW text format to stdout.
//
//   g++ -O2 -std=c++20 -ffp-contract=off -o bench_data/gen_ctr utl/gen_ctr.cc
//   bench_data/gen_ctr [LINES [SEED]]          LINES default 5000000, SEED default 1
//
// Used by utl/bench (row c); later issues reuse it for long streams (millions to billions of lines, drift-free, so
// any loss change comes from the learner) and for train/test pairs: the hidden model below does NOT depend on SEED,
// so `gen_ctr N 1` and `gen_ctr N 2` are two independent samples of the same population.
//
// Model
// -----
// Every line is one ad impression:   LABEL |u USER... |a AD... |s SITE... |c CONTEXT...
// with four namespaces of string features (a letter prefix + a decimal id, so never an all-digit name):
//
//   ns  slot  meaning                 vocabulary  draws per line
//   u   i     user id                  1,000,000   1
//   u   k     user interest segment      200,000   2
//   a   d     ad id                      500,000   1
//   a   v     advertiser / campaign      100,000   1
//   a   r     creative                   300,000   1
//   s   p     publisher / site           200,000   1
//   s   l     placement / page         1,000,000   1
//   c   m     device model               100,000   1
//   c   g     geo (city)                 150,000   1
//   c   h     hour of week                   168   1
//
// i.e. 11 features a line (12 with the learner's constant). Each draw is an independent Zipf sample: rank r in
// 1..n with probability proportional to r^-s, s = 1.125, written as the id r (rank 1 is the most popular id).
// s = 1 + 1/8 is chosen so r^-s = 1 / (r * sqrt(sqrt(sqrt(r)))) needs only IEEE-754 exact operations.
// Draws within a line may repeat (a duplicate feature), as in real logs.
//
// Labels come from a hidden logistic model:
//   z = BIAS + sum over the line's features f of w(slot(f), id(f)),   P(y = 1) = sigmoid(z),   y in {1, -1}
// w(slot, id) ~ N(0, 0.5^2) approximately: a fixed 64-bit hash of (slot, id) split into four 16-bit uniforms whose
// centred sum (Irwin-Hall, n = 4) is scaled to variance 0.25. No per-id table: the model is a pure function of
// (slot, id), with a fixed key, independent of SEED. BIAS = -4.0 gives a click rate of about 5%.
//
// Determinism: the generator is splitmix64 seeded from SEED; uniforms are 53-bit; Zipf sampling is
// rejection-inversion with s = 9/8 (no tables, no libm); exp() is a local polynomial.
// Everything is integer arithmetic or IEEE-754 + - * / sqrt, so the output is byte-identical across runs, machines, compilers and
// libms (as long as floating-point contraction into FMA is off: -ffp-contract=off, the default in ISO C++ mode).
//
// Nothing but the log goes to stdout; errors go to stderr (exit 2).

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

constexpr double kBias = -4.0;                              // sets the click rate (about 5%)
constexpr double kWeightSd = 0.5;                           // sd of the hidden per-id weights
constexpr std::uint64_t kModelKey = 0x6c65707573435452ULL;  // "lepusCTR": fixed, independent of SEED

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finalizer as a stateless hash
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double uniform01(std::uint64_t& state) {  // [0, 1), 53 bits, exact
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

// exp(x) from + - * / and ldexp only, so it rounds the same everywhere. Relative error ~1e-16 (irrelevant here:
// only its determinism matters).
double det_exp(double x) {
  if (x < -700.0) return 0.0;
  if (x > 700.0) x = 700.0;
  const double k = std::nearbyint(x * 1.4426950408889634);                                 // x / ln 2
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;  // |r| <= 0.35
  double p = 1.0 / 6227020800.0;  // Taylor to r^13 / 13!
  for (double d : {479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0,
                   2.0, 1.0, 1.0})
    p = p * r + 1.0 / d;
  return std::ldexp(p, static_cast<int>(k));
}

// Hidden weight of (slot, id): approximately N(0, kWeightSd^2).
double hidden_weight(std::uint32_t slot, std::uint32_t id) {
  const std::uint64_t h = mix64(kModelKey ^ mix64((static_cast<std::uint64_t>(slot) << 32) | id));
  const double s = static_cast<double>(h & 0xffff) + static_cast<double>((h >> 16) & 0xffff) +
                   static_cast<double>((h >> 32) & 0xffff) + static_cast<double>(h >> 48);
  // four U{0..65535}: mean 4 * 32767.5, variance 4 * (65536^2 - 1) / 12
  constexpr double kMean = 4 * 32767.5;
  const double sd = std::sqrt(4.0 * (65536.0 * 65536.0 - 1.0) / 12.0);
  return (s - kMean) / sd * kWeightSd;
}

// Zipf(s = 1.125) over 1..n by rejection-inversion (Hoermann & Derflinger 1996, as in Apache Commons RNG's
// RejectionInversionZipfSampler): no table, a few flops and ~1.003 uniforms a draw. With s = 9/8
// the hat's integral H(x) = -8 x^(-1/8) and its inverse H^-1(y) = (-y / 8)^-8 need only sqrt, * and /.
class Zipf {
 public:
  explicit Zipf(std::uint32_t n)
      : n_(n), h_x1_(H(1.5) - 1.0), h_n_(H(n + 0.5)), s_(2.0 - H_inverse(H(2.5) - h(2.0))) {}

  std::uint32_t operator()(std::uint64_t& state) const {  // -> rank 1..n
    for (;;) {
      const double u = h_n_ + uniform01(state) * (h_x1_ - h_n_);  // in (H(1.5) - 1, H(n + 0.5)]
      const double x = H_inverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1.0) k = 1.0;
      if (k > n_) k = n_;
      if (k - x <= s_ || u >= H(k + 0.5) - h(k)) return static_cast<std::uint32_t>(k);
    }
  }

 private:
  static double root8(double x) { return std::sqrt(std::sqrt(std::sqrt(x))); }
  static double h(double x) { return 1.0 / (x * root8(x)); }  // x^-(9/8)
  static double H(double x) { return -8.0 / root8(x); }       // an antiderivative of h
  static double H_inverse(double y) {
    const double t = -0.125 * y, t2 = t * t, t4 = t2 * t2;
    return 1.0 / (t4 * t4);
  }
  double n_, h_x1_, h_n_, s_;
};

struct Slot {
  char ns;      // namespace letter
  char prefix;  // feature-name prefix
  std::uint32_t vocab;
  int draws;
};

constexpr Slot kSlots[] = {
    {'u', 'i', 1000000, 1}, {'u', 'k', 200000, 2},                          // user
    {'a', 'd', 500000, 1},  {'a', 'v', 100000, 1},  {'a', 'r', 300000, 1},  // ad
    {'s', 'p', 200000, 1},  {'s', 'l', 1000000, 1},                         // site
    {'c', 'm', 100000, 1},  {'c', 'g', 150000, 1},  {'c', 'h', 168, 1},     // context
};
constexpr std::size_t kNumSlots = sizeof(kSlots) / sizeof(kSlots[0]);

class Out {  // large stdout buffer, fwrite in big blocks
 public:
  Out() : buf_(kSize) {}
  ~Out() { flush(); }
  void put(char c) { buf_[len_++] = c; }
  void put_u32(std::uint32_t v) {
    char tmp[10];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) buf_[len_++] = tmp[--n];
  }
  void end_line() {
    buf_[len_++] = '\n';
    if (len_ > kSize - kSlack) flush();
  }
  void flush() {
    if (len_ != 0 && std::fwrite(buf_.data(), 1, len_, stdout) != len_) {
      std::fprintf(stderr, "gen_ctr: write error: %s\n", std::strerror(errno));
      std::exit(2);
    }
    len_ = 0;
  }

 private:
  static constexpr std::size_t kSize = std::size_t{1} << 22;
  static constexpr std::size_t kSlack = 4096;  // a line is far shorter than this
  std::vector<char> buf_;
  std::size_t len_ = 0;
};

bool parse_u64(const char* s, std::uint64_t& out) {
  if (*s < '0' || *s > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t lines = 5000000, seed = 1;
  if (argc > 3 || (argc > 1 && !parse_u64(argv[1], lines)) || (argc > 2 && !parse_u64(argv[2], seed))) {
    std::fprintf(stderr,
                 "usage: gen_ctr [LINES [SEED]]   (defaults 5000000 1; CTR-like VW text on stdout)\n");
    return 2;
  }

  std::vector<Zipf> samplers;
  for (const Slot& s : kSlots) samplers.emplace_back(s.vocab);

  std::uint64_t state = mix64(seed ^ 0x5eedc1c4c0ffee00ULL);
  Out out;
  std::uint32_t ids[16];
  for (std::uint64_t line = 0; line < lines; ++line) {
    double z = kBias;
    std::size_t nid = 0;
    for (std::size_t i = 0; i < kNumSlots; ++i)
      for (int d = 0; d < kSlots[i].draws; ++d) {
        const std::uint32_t id = samplers[i](state);
        z += hidden_weight(static_cast<std::uint32_t>(i), id);
        ids[nid++] = id;
      }
    const bool click = uniform01(state) * (1.0 + det_exp(-z)) < 1.0;  // u < sigmoid(z)
    if (click) {
      out.put('1');
    } else {
      out.put('-');
      out.put('1');
    }
    nid = 0;
    char ns = 0;
    for (std::size_t i = 0; i < kNumSlots; ++i) {
      if (kSlots[i].ns != ns) {
        ns = kSlots[i].ns;
        out.put(' ');
        out.put('|');
        out.put(ns);
      }
      for (int d = 0; d < kSlots[i].draws; ++d) {
        out.put(' ');
        out.put(kSlots[i].prefix);
        out.put_u32(ids[nid++]);
      }
    }
    out.end_line();
  }
  out.flush();
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "gen_ctr: write error: %s\n", std::strerror(errno));
    return 2;
  }
  return 0;
}
