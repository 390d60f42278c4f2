// The declared state (learners/common/state.h): one declaration gives the bytes, a load that checks every
// field against its bounds and changes nothing when it refuses, and the readable text.
#include "learners/common/state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

namespace lepus {
namespace {

// A learner-shaped holder of state: a number with bounds, a count, a flag, a label range, a slot table.
struct Toy {
  struct Slot {
    double a = 0.0, b = 0.0;
  };
  double eps = 1.0;
  double t = 0.0;
  bool on = false;
  common::LabelClip clip{{-1.0f, 1.0f}, false};
  ZeroedTable<Slot> slots{8};
  std::string_view name() const { return "toy"; }

  template <class Self, class V>
  static void state(Self& self, V& v) {
    v.tag(0x70790001u);
    v.number("eps", self.eps, common::kPositive);
    v.number("t", self.t, common::kCount);
    v.flag("on", self.on);
    v.clip(self.clip);
    v.slots(
        self.slots, [](const Slot& s) { return s.b >= 0.0; },
        [](std::ostream& out, size_t, const Slot& s) { out << s.a << " " << s.b; });
  }
};

Toy filled() {
  Toy toy;
  toy.eps = 0.5;
  toy.t = 3.0;
  toy.on = true;
  toy.clip.widen(-2.0f, 4.0f);
  toy.slots[2] = {1.5, 2.0};
  toy.slots[5] = {-1.0, 0.25};
  return toy;
}

std::vector<uint8_t> bytes_of(const Toy& toy) {
  ModelWriter out;
  common::save_state(toy, out);
  return out.bytes();
}

// Loads `bytes` into l; returns the error text, empty when it loaded.
template <class L>
std::string loaded(L& l, const std::vector<uint8_t>& bytes) {
  ModelReader in(bytes.data(), bytes.size(), "m");
  try {
    common::load_state(l, in);
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "";
}

TEST(DeclaredState, SavesLoadsAndWritesEveryFieldOnce) {
  const std::vector<uint8_t> saved = bytes_of(filled());
  Toy back;
  ASSERT_EQ(loaded(back, saved), "");
  EXPECT_EQ(bytes_of(back), saved);
  EXPECT_EQ(back.eps, 0.5);
  EXPECT_TRUE(back.on);
  EXPECT_EQ(back.slots[5].a, -1.0);
  std::ostringstream text;
  common::write_state(back, text);
  EXPECT_EQ(text.str(), "eps 0.5\nt 3\non 1\nmin_label -2\nmax_label 4\n2:1.5 2\n5:-1 0.25\n");
}

// Each field out of its bounds in turn: the load is refused naming the field, and the holder keeps every
// field it had, including those read before the bad one.
TEST(DeclaredState, AFieldOutOfBoundsIsRefusedAndChangesNothing) {
  const std::vector<uint8_t> saved = bytes_of(filled());
  auto with = [&](size_t at, const void* value, size_t n) {
    std::vector<uint8_t> b = saved;
    std::memcpy(b.data() + at, value, n);
    return b;
  };
  const double zero = 0.0, half = 2.5, nan = std::nan("");
  const uint8_t two = 2;
  const double negative = -1.0;
  // The layout: tag (4), eps (8), t (8), on (1), the range (4 + 4), the table size and count (8 + 8), then
  // per slot an index (8) and a, b (8 + 8).
  const struct {
    std::vector<uint8_t> bytes;
    const char* names;
  } cases[] = {
      {with(4, &zero, 8), "eps 0 is not > 0"},
      {with(4, &nan, 8), "eps nan"},
      {with(12, &half, 8), "t 2.5 is not a whole number >= 0"},
      {with(20, &two, 1), "on is not 0 or 1"},
      {with(21 + 8 + 16 + 8 + 8, &negative, 8), "slot 2 out of range"},
      {with(21 + 8 + 16 + 8 + 8, &nan, 8), "non-finite value in slot 2"},
  };
  for (const auto& c : cases) {
    Toy toy;
    toy.slots[7] = {9.0, 9.0};
    const std::vector<uint8_t> before = bytes_of(toy);
    const std::string error = loaded(toy, c.bytes);
    EXPECT_NE(error.find(c.names), std::string::npos) << error;
    EXPECT_NE(error.find("toy state"), std::string::npos) << error;
    EXPECT_EQ(bytes_of(toy), before) << c.names;
  }
  Toy toy;
  std::vector<uint8_t> other = saved;
  other[0] ^= 1;
  EXPECT_NE(loaded(toy, other).find("not a toy state"), std::string::npos);
}

// A component that declares its own state, nested in its holder's: a value that follows from the holder's
// (derived) and scratch sized after the load (settle).
struct Part {
  Eigen::VectorXd w;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> basis;
  int64_t cols = 0;
  double scale = 0.0;
  Eigen::VectorXd scratch;
  template <class Self, class V>
  static void state(Self& self, V& v, double scale) {
    const uint64_t cols = v.whole("cols", self.cols, 0, 3);
    v.rows("basis", self.w, self.basis, 2, cols, false, 4, 3);
    v.derived(self.scale, scale);
    v.settle(self, [](auto& p) { p.scratch.setZero(p.w.size()); });
  }
};

// The dense kinds: a text the holder must share, a number that may be unbounded, a compact index of slots
// below 2^bits, a symmetric matrix as rows of (w_i, m_ij for j >= i), a flag stored as a u32, a std::vector,
// a matrix's top-left block, and a nested component.
struct Dense {
  double radius = std::numeric_limits<double>::infinity(), scale = 2.0;
  CompactIndex index;
  Eigen::VectorXd w;
  Eigen::MatrixXd m;
  bool current = false;
  std::vector<double> values;
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(3, 2);
  Part part;
  std::string_view name() const { return "dense"; }
  template <class Self, class V>
  static void state(Self& self, V& v) {
    v.fixed("rule", std::string("dense-rule"), "another rule's");
    v.unbounded("radius", self.radius, common::kPositive);
    const double scale = v.number("scale", self.scale, common::kPositive);
    const uint64_t n = v.index("held", self.index, 4, 8);
    v.rows("sigma", self.w, self.m, n, n, true, 4, 4);
    v.template flag<uint32_t>("current", self.current);
    v.vector("values", self.values, 2);
    v.block("K", self.k, 2, 1, 3, 2);
    v.nested(self.part, scale);
  }
};

Dense dense_filled() {
  Dense d;
  d.scale = 3.0;
  d.index.insert(7);
  d.index.insert(200);
  d.w = Eigen::VectorXd::Zero(4);
  d.w << 1.0, 2.0, 0.0, 0.0;
  d.m = Eigen::MatrixXd::Zero(4, 4);
  d.m(0, 0) = 4.0, d.m(0, 1) = d.m(1, 0) = 0.5, d.m(1, 1) = 5.0;
  d.current = true;
  d.values = {0.25, -4.0};
  d.k(1, 0) = 8.0;
  d.part.cols = 2;
  d.part.w = Eigen::VectorXd::Zero(4);
  d.part.w << -1.0, 1.0, 0.0, 0.0;
  d.part.basis = decltype(d.part.basis)::Zero(4, 3);
  d.part.basis(0, 1) = 6.0, d.part.basis(1, 0) = 7.0;
  d.part.scale = 3.0;
  return d;
}

template <class T>
std::vector<uint8_t> saved_bytes(const T& x) {
  ModelWriter out;
  common::save_state(x, out);
  return out.bytes();
}

TEST(DeclaredState, DenseKindsAndANestedPartLoadWholeOrNotAtAll) {
  const std::vector<uint8_t> saved = saved_bytes(dense_filled());
  Dense loaded;
  ModelReader in(saved.data(), saved.size(), "m");
  common::load_state(loaded, in);
  EXPECT_EQ(saved_bytes(loaded), saved);
  EXPECT_TRUE(std::isinf(loaded.radius));
  EXPECT_EQ(loaded.m(1, 0), 0.5);  // mirrored
  EXPECT_EQ(loaded.part.basis(1, 0), 7.0);
  EXPECT_TRUE(loaded.current);
  EXPECT_EQ(loaded.values[1], -4.0);
  EXPECT_EQ(loaded.k(1, 0), 8.0);
  EXPECT_EQ(loaded.part.scale, 3.0);         // derived from the holder's number
  EXPECT_EQ(loaded.part.scratch.size(), 4);  // settled after the commit
  std::ostringstream text;
  common::write_state(loaded, text);
  EXPECT_EQ(text.str(), "rule dense-rule\nradius none\nscale 3\ncurrent 1\ncols 2\n");
  // The layout: the rule (8 + 10), radius (8), scale (8), the count (8), slots (8 + 8), the rows (8 + 8 + 8,
  // 8 + 8), the flag (4), values (8 + 8), K's block (8 + 8), cols (8), the part's rows (3 + 3 numbers).
  auto with = [&](size_t at, double value) {
    std::vector<uint8_t> b = saved;
    std::memcpy(b.data() + at, &value, 8);
    return b;
  };
  std::vector<uint8_t> high_slot = saved;
  high_slot[18 + 8 + 8 + 8 + 8 + 1] = 1;  // slot 200 + 256
  std::vector<uint8_t> other_rule = saved;
  other_rule[8] = 'D';
  std::vector<uint8_t> flag_two = saved;
  flag_two[98] = 2;
  const struct {
    std::vector<uint8_t> bytes;
    const char* names;
  } cases[] = {
      {other_rule, "another rule's"},
      {with(18, -1.0), "radius -1 is not > 0"},
      {high_slot, "slot 456 out of range"},
      {with(18 + 8 + 8 + 8 + 16 + 8, std::nan("")), "a non-finite value in sigma"},
      {flag_two, "current is not 0 or 1"},
      {with(102 + 8, std::nan("")), "a non-finite value in values"},
      {with(118, std::nan("")), "a non-finite value in K"},
      {with(saved.size() - 8, std::nan("")), "a non-finite value in basis"},
  };
  for (const auto& c : cases) {
    Dense d = dense_filled();
    d.radius = 9.0;
    const std::vector<uint8_t> before = saved_bytes(d);
    ModelReader bad(c.bytes.data(), c.bytes.size(), "m");
    try {
      common::load_state(d, bad);
      ADD_FAILURE() << "loaded: " << c.names;
    } catch (const ModelFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(c.names), std::string::npos) << e.what();
    }
    EXPECT_EQ(saved_bytes(d), before) << c.names;
    EXPECT_EQ(d.part.scratch.size(), 0) << c.names;
  }
}

// A component with its own save and load (a load that takes the learner's name, as the kernel components').
struct Counter {
  uint64_t n = 0;
  void save(ModelWriter& out) const { out.put_u64(n); }
  void load(ModelReader& in, const std::string& who) {
    n = in.get_u64((who + " counter").c_str());
    if (n > 100) throw ModelFormatError(who + ": counter " + std::to_string(n) + " too large");
  }
};

// A holder of the kinds a kernel learner declares: an optional number saved as 0 when absent, a member
// component, a stored code saying whether a list of components follows, that list, and rows of parallel columns whose
// count the component gave.
struct Composite {
  std::optional<double> c;
  Counter counter;
  std::vector<std::unique_ptr<Counter>> problems;
  std::vector<double> beta, gamma;
  std::string_view name() const { return "composite"; }

  template <class Self, class V>
  static void state(Self& self, V& v) {
    v.zero_if_absent("C", self.c, common::kNonNegative);
    const uint64_t n = v.part(
                            "counter", self.counter, [] { return Counter(); },
                            [](std::ostream& out, const Counter& k) { out << "counter " << k.n << "\n"; })
                           .n;
    const bool held = v.value("held", uint8_t{!self.problems.empty()}, uint8_t{0}, uint8_t{1}) == 1;
    v.parts(
        "problem", self.problems,
        [held] {
          std::vector<std::unique_ptr<Counter>> list;
          for (int p = 0; held && p < 2; ++p) list.push_back(std::make_unique<Counter>());
          return list;
        },
        [](std::ostream& out, size_t p, const Counter& k) { out << "problem " << p << " " << k.n << "\n"; });
    const auto read = v.columns(
        "row", n, [](const double* r) { return r[1] >= 0.0; }, self.beta, self.gamma);
    v.check(std::count(read[1]->begin(), read[1]->begin() + static_cast<std::ptrdiff_t>(n), 1.0) == 0,
            "a gamma of 1");
  }
};

Composite composite() {
  Composite x;
  x.c = 2.5;
  x.counter.n = 2;
  x.problems.push_back(std::make_unique<Counter>(Counter{7}));
  x.problems.push_back(std::make_unique<Counter>(Counter{8}));
  x.beta = {1.0, -1.0};
  x.gamma = {0.5, 2.0};
  return x;
}

TEST(DeclaredState, ComponentsListsCodesAndColumnsRoundTrip) {
  const Composite filled = composite();
  const std::vector<uint8_t> saved = saved_bytes(filled);
  EXPECT_EQ(saved.size(), 8u + 8u + 1u + 16u + 32u);
  Composite x;
  ASSERT_EQ(loaded(x, saved), "");
  EXPECT_EQ(saved_bytes(x), saved);
  EXPECT_EQ(x.c, 2.5);
  ASSERT_EQ(x.problems.size(), 2u);
  EXPECT_EQ(x.problems[1]->n, 8u);
  EXPECT_EQ(x.gamma, (std::vector<double>{0.5, 2.0}));
  std::ostringstream text;
  common::write_state(x, text);
  EXPECT_EQ(text.str(), "C 2.5\ncounter 2\nproblem 0 7\nproblem 1 8\n");
  // 0 is an absent C; no list held.
  Composite bare;
  bare.c = 1.0;
  Composite none;
  none.c = std::nullopt;
  ASSERT_EQ(loaded(bare, saved_bytes(none)), "");
  EXPECT_FALSE(bare.c.has_value());
  EXPECT_TRUE(bare.problems.empty());
}

// A bad field of each kind, and every cut of the bytes: refused, and the holder keeps every field it had.
TEST(DeclaredState, ARefusedComponentListOrColumnChangesNothing) {
  const std::vector<uint8_t> saved = saved_bytes(composite());
  auto with = [&](size_t at, const void* value, size_t n) {
    std::vector<uint8_t> b = saved;
    std::memcpy(b.data() + at, value, n);
    return b;
  };
  const double negative = -1.0, nan = std::nan(""), one = 1.0;
  const uint64_t large = 200;
  const uint8_t two = 2;
  // C (8), the counter (8), held (1), the two problems' counters (8 + 8), then beta and gamma per row.
  std::vector<std::pair<std::vector<uint8_t>, std::string>> cases = {
      {with(0, &negative, 8), "C -1 is not >= 0"},
      {with(8, &large, 8), "counter 200 too large"},
      {with(16, &two, 1), "held 2 is not in [0, 1]"},
      {with(25, &large, 8), "counter 200 too large"},
      {with(33 + 8, &negative, 8), "row 0 out of range"},
      {with(33 + 16, &nan, 8), "a non-finite value in row 1"},
      {with(33 + 24, &one, 8), "a gamma of 1"},
  };
  for (size_t cut = 0; cut < saved.size(); ++cut)
    cases.push_back({std::vector<uint8_t>(saved.begin(), saved.begin() + cut), ""});
  for (const auto& [bytes, names] : cases) {
    Composite x;
    x.c = 1.0;
    x.counter.n = 1;
    x.beta = {3.0};
    x.gamma = {4.0};
    const std::vector<uint8_t> before = saved_bytes(x);
    const std::string error = loaded(x, bytes);
    EXPECT_NE(error, "") << bytes.size();
    EXPECT_NE(error.find(names), std::string::npos) << error;
    EXPECT_EQ(saved_bytes(x), before) << names << " " << bytes.size();
    EXPECT_TRUE(x.problems.empty());
  }
}

// u32 version tags, stored values that are no member, and a custom part: the older tag loads with the custom
// part absent; an unknown tag, a NaN value and a custom part's refusal are refused and change nothing.
struct Tagged {
  double loss = 0.0;
  std::string note;
  std::vector<double> kept;
  std::string_view name() const { return "tagged"; }
  template <class Self, class V>
  static void state(Self& self, V& v) {
    const size_t older = v.version({0x32u, 0x31u});
    const double loss = v.value("loss", self.loss, -1e300, 1e300);
    v.derived(self.loss, loss);
    v.derived(self.note, v.value("note", self.note));
    if (older == 1) return v.absent(self.kept, std::vector<double>{});
    v.custom(
        [&self](ModelWriter& out) {
          out.put_u64(self.kept.size()), out.put_values(self.kept.data(), self.kept.size());
        },
        [&self](ModelReader& in, auto bad) -> std::function<void()> {
          std::vector<double> read(in.get_u64("kept"));
          if (read.size() > 4) throw bad("more than 4 kept");
          in.get_raw(read.data(), read.size() * sizeof(double), "kept");
          return [&self, read] { self.kept = read; };
        },
        [](std::ostream&) {});
  }
};

TEST(DeclaredState, TagsValuesAndCustomPartsLoadWholeOrNotAtAll) {
  Tagged t;
  t.loss = 2.5, t.note = "hi", t.kept = {1.0, 2.0};
  const std::vector<uint8_t> saved = saved_bytes(t);
  Tagged back;
  ASSERT_EQ(loaded(back, saved), "");
  EXPECT_EQ(saved_bytes(back), saved);
  std::vector<uint8_t> older(saved.begin(), saved.end() - 8 - 16);  // tag 0x31: no kept part
  older[0] = 0x31;
  Tagged old;
  old.kept = {9.0};
  ASSERT_EQ(loaded(old, older), "");
  EXPECT_EQ(old.note, "hi");
  EXPECT_TRUE(old.kept.empty());
  auto with = [&](size_t at, const void* value, size_t n) {
    std::vector<uint8_t> b = saved;
    std::memcpy(b.data() + at, value, n);
    return b;
  };
  const uint32_t unknown = 0x33;
  const double nan = std::nan("");
  const uint64_t five = 5;
  // The layout: the tag (4), loss (8), the note (8 + 2), the kept count (8) and values (16).
  const struct {
    std::vector<uint8_t> bytes;
    const char* names;
  } cases[] = {
      {with(0, &unknown, 4), "not a tagged state"},
      {with(4, &nan, 8), "loss nan is not in"},
      {with(4 + 8 + 10, &five, 8), "more than 4 kept"},
  };
  for (const auto& c : cases) {
    Tagged x;
    x.loss = 1.0, x.note = "x", x.kept = {3.0};
    const std::vector<uint8_t> before = saved_bytes(x);
    EXPECT_NE(loaded(x, c.bytes).find(c.names), std::string::npos) << c.names;
    EXPECT_EQ(saved_bytes(x), before) << c.names;
  }
}

}  // namespace
}  // namespace lepus
