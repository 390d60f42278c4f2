// The declared state (learners/common/state.h): one declaration gives the bytes, a load that checks every
// field against its bounds and changes nothing when it refuses, and the readable text.
#include "learners/common/state.h"

#include <gtest/gtest.h>

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

// Loads `bytes` into a fresh Toy; returns the error text, empty when it loaded.
std::string load_into(Toy& toy, const std::vector<uint8_t>& bytes) {
  ModelReader in(bytes.data(), bytes.size(), "m");
  try {
    common::load_state(toy, in);
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "";
}

TEST(DeclaredState, SavesLoadsAndWritesEveryFieldOnce) {
  const std::vector<uint8_t> saved = bytes_of(filled());
  Toy loaded;
  ASSERT_EQ(load_into(loaded, saved), "");
  EXPECT_EQ(bytes_of(loaded), saved);
  EXPECT_EQ(loaded.eps, 0.5);
  EXPECT_TRUE(loaded.on);
  EXPECT_EQ(loaded.slots[5].a, -1.0);
  std::ostringstream text;
  common::write_state(loaded, text);
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
    const std::string error = load_into(toy, c.bytes);
    EXPECT_NE(error.find(c.names), std::string::npos) << error;
    EXPECT_NE(error.find("toy state"), std::string::npos) << error;
    EXPECT_EQ(bytes_of(toy), before) << c.names;
  }
  Toy toy;
  std::vector<uint8_t> other = saved;
  other[0] ^= 1;
  EXPECT_NE(load_into(toy, other).find("not a toy state"), std::string::npos);
}

}  // namespace
}  // namespace lepus
