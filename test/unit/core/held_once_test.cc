#include "core/held_once.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace lepus {
namespace {

using Values = std::vector<int>;

TEST(HeldOnce, EqualValuesAreOneCopy) {
  HeldOnce<Values> held;
  auto a = held.get(Values{1, 2, 3}, 7);
  auto b = held.get(Values{1, 2, 3}, 7);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(*a, (Values{1, 2, 3}));
  EXPECT_EQ(held.entries(), 1u);
}

TEST(HeldOnce, UnequalValuesSharingAHashStayApart) {
  HeldOnce<Values> held;
  auto a = held.get(Values{1, 2, 3}, 7);
  auto b = held.get(Values{3, 2, 1}, 7);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(*b, (Values{3, 2, 1}));
  EXPECT_EQ(held.get(Values{3, 2, 1}, 7).get(), b.get());
}

TEST(HeldOnce, AValueLapsesWithItsLastHolder) {
  HeldOnce<Values> held;
  std::weak_ptr<const Values> seen = held.get(Values{5}, 1);
  EXPECT_TRUE(seen.expired());  // nobody kept it
  auto again = held.get(Values{5}, 1);
  EXPECT_EQ(*again, Values{5});
  // Lapsed entries are swept: a stream of values each dropped at once keeps the table bounded.
  for (int i = 0; i < 100000; ++i) held.get(Values{i}, static_cast<uint64_t>(i));
  EXPECT_LT(held.entries(), 2100u);
  EXPECT_EQ(held.get(Values{5}, 1).get(), again.get());  // a held value survives the sweeps
}

TEST(HeldOnce, ThreadsAskingForEqualValuesGetOneCopy) {
  HeldOnce<Values> held;
  std::vector<std::shared_ptr<const Values>> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] { got[t] = held.get(Values(1000, 4), 99); });
  for (std::thread& t : threads) t.join();
  for (const auto& p : got) EXPECT_EQ(p.get(), got.front().get());
}

}  // namespace
}  // namespace lepus
