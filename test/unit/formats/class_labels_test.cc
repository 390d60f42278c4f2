// --named_labels: NamedLabels and split_named_labels.
#include "formats/named_labels.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "lepus/errors.h"

namespace lepus {
namespace {

using Strings = std::vector<std::string>;

// ---- NamedLabels, split_named_labels ----------------------------------------------------------------------

TEST(NamedLabels, ClassesAreOneBasedInListOrder) {
  const NamedLabels named({"dog", "cat", "bird"});
  EXPECT_EQ(named.size(), 3u);
  EXPECT_EQ(named.find("dog"), 1u);
  EXPECT_EQ(named.find("cat"), 2u);
  EXPECT_EQ(named.find("bird"), 3u);
  EXPECT_EQ(named.find("cow"), 0u);
  EXPECT_EQ(named.find(""), 0u);
  EXPECT_EQ(named.find("do"), 0u);
  EXPECT_EQ(named.find("dogs"), 0u);
  EXPECT_EQ(named.name(1), "dog");
  EXPECT_EQ(named.name(3), "bird");
  EXPECT_EQ(named.names(), (Strings{"dog", "cat", "bird"}));
  EXPECT_THROW(named.name(0), Error);
  EXPECT_THROW(named.name(4), Error);
}

TEST(NamedLabels, CopiesStayValid) {
  auto original = std::make_unique<NamedLabels>(Strings{"b", "a", "c"});
  const NamedLabels copy = *original;
  original.reset();
  EXPECT_EQ(copy.find("a"), 2u);
  EXPECT_EQ(copy.find("c"), 3u);
  EXPECT_EQ(copy.name(1), "b");
}

TEST(NamedLabels, RefusesEmptyRepeatedOrNoNames) {
  EXPECT_THROW(NamedLabels(Strings{}), ConfigError);
  EXPECT_THROW(NamedLabels(Strings{"a", ""}), ConfigError);
  EXPECT_THROW(NamedLabels(Strings{"a", "b", "a"}), ConfigError);
  try {
    NamedLabels(Strings{"x", "y", "x"});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(NamedLabels(Strings{"only"}));
}

TEST(NamedLabels, SplitsVwsCommaList) {
  EXPECT_EQ(split_named_labels("a,b,c"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(split_named_labels("single"), (Strings{"single"}));
  EXPECT_EQ(split_named_labels("a, b"), (Strings{"a", " b"}));  // not trimmed, as in VW
  for (const char* bad : {"", ",", "a,,b", ",a", "a,"}) {
    EXPECT_THROW(split_named_labels(bad), ConfigError) << "'" << bad << "'";
  }
}
}  // namespace
}  // namespace lepus
