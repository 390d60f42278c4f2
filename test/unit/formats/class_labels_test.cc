// Multiclass (--oaa) and cost-sensitive (--csoaa) labels: NamedLabels and split_named_labels, and the label
// section of VW text, libsvm and CSV in LabelMode::kMulticlass and kCostSensitive.
#include <gtest/gtest.h>

#include "collecting_sink.h"

#include <cfloat>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/csv.h"
#include "formats/format.h"
#include "formats/libsvm.h"
#include "formats/named_labels.h"
#include "formats/vw_text.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

using testing::CollectingSink;
using testing::Parsed;

using ParseFn = void (*)(std::string_view, const ParseOptions&, Example&, WarningSink&);
using Classes = std::vector<std::pair<uint32_t, float>>;
using Strings = std::vector<std::string>;

Parsed run(ParseFn fn, std::string_view line, const ParseOptions& options) {
  Parsed out;
  CollectingSink sink;
  fn(line, options, out.ex, sink);
  out.warnings = std::move(sink.messages);
  return out;
}

ParseOptions mode(LabelMode label_mode, std::vector<std::string> names = {}) {
  ParseOptions options;
  options.label_mode = label_mode;
  if (!names.empty()) options.named = std::make_shared<const NamedLabels>(std::move(names));
  return options;
}

Parsed vw(std::string_view line, const ParseOptions& options) { return run(parse_vw_line, line, options); }

Classes classes(const Example& ex) {
  Classes out;
  for (const ClassCost& c : ex.classes) out.emplace_back(c.klass, c.cost);
  return out;
}

// The features must be exactly those of the same line read in scalar mode: the label mode changes the label
// only.
void expect_same_features(const Example& ex, const Example& scalar) {
  ASSERT_EQ(ex.features.size(), scalar.features.size());
  for (size_t i = 0; i < ex.features.size(); ++i) {
    EXPECT_EQ(ex.features[i].index, scalar.features[i].index) << i;
    EXPECT_EQ(ex.features[i].value, scalar.features[i].value) << i;
  }
  ASSERT_EQ(ex.groups.size(), scalar.groups.size());
  EXPECT_EQ(ex.num_linear, scalar.num_linear);
}

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

// ---- VW text, multiclass ----------------------------------------------------------------------------------

TEST(VwTextMulticlass, PlainLabel) {
  const Parsed p = vw("3 |f a b:2", mode(LabelMode::kMulticlass));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass);
  EXPECT_EQ(classes(p.ex), (Classes{{3, 0.0f}}));
  EXPECT_EQ(p.ex.label, 0.0f);
  EXPECT_EQ(p.ex.weight, 1.0f);
  EXPECT_EQ(p.ex.initial, 0.0f);
  EXPECT_TRUE(p.ex.tag.empty());
  expect_same_features(p.ex, vw("3 |f a b:2", ParseOptions{}).ex);
}

TEST(VwTextMulticlass, Weight) {
  const Parsed p = vw("7 2.5 |f a", mode(LabelMode::kMulticlass));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(classes(p.ex), (Classes{{7, 0.0f}}));
  EXPECT_EQ(p.ex.weight, 2.5f);
  // A bad weight reads as today's scalar weights do: 0 with VW's warning, the label kept.
  const Parsed bad = vw("7 w |f a", mode(LabelMode::kMulticlass));
  EXPECT_EQ(bad.warnings, (Strings{"'w' is not a good float, replacing with 0"}));
  EXPECT_TRUE(bad.ex.labeled);
  EXPECT_EQ(bad.ex.weight, 0.0f);
}

TEST(VwTextMulticlass, TagRulesAreUnchanged) {
  const ParseOptions options = mode(LabelMode::kMulticlass);
  Parsed p = vw("2 'tg |f a", options);
  EXPECT_EQ(p.ex.tag, "tg");
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.0f}}));
  p = vw("2 0.5 tg|f a", options);
  EXPECT_EQ(p.ex.tag, "tg");
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.0f}}));
  EXPECT_EQ(p.ex.weight, 0.5f);
  // The token touching the bar is the tag, so `2|f a` has no label.
  p = vw("2|f a", options);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.ex.tag, "2");
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass);
}

TEST(VwTextMulticlass, ZeroIsAClass) {  // VW's --indexing 0
  const Parsed p = vw("0 |f a", mode(LabelMode::kMulticlass));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(classes(p.ex), (Classes{{0, 0.0f}}));
  EXPECT_EQ(classes(vw("007 |f a", mode(LabelMode::kMulticlass)).ex), (Classes{{7, 0.0f}}));
  EXPECT_EQ(classes(vw("4294967295 |f a", mode(LabelMode::kMulticlass)).ex), (Classes{{4294967295u, 0.0f}}));
}

TEST(VwTextMulticlass, NamedLabels) {
  const ParseOptions options = mode(LabelMode::kMulticlass, {"cat", "dog", "7"});
  Parsed p = vw("dog |f a", options);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.0f}}));
  p = vw("cat 3 'id |f a", options);
  EXPECT_EQ(classes(p.ex), (Classes{{1, 0.0f}}));
  EXPECT_EQ(p.ex.weight, 3.0f);
  EXPECT_EQ(p.ex.tag, "id");
  p = vw("7 |f a", options);  // a name, not the number 7
  EXPECT_EQ(classes(p.ex), (Classes{{3, 0.0f}}));
}

TEST(VwTextMulticlass, UnknownNameWarnsAndLeavesItUnlabeled) {
  const ParseOptions options = mode(LabelMode::kMulticlass, {"cat", "dog"});
  for (const char* line : {"cow |f a", "cow 2 |f a", "1 |f a"}) {
    const Parsed p = vw(line, options);
    const std::string name = std::string(line).substr(0, std::string(line).find(' '));
    EXPECT_EQ(p.warnings, (Strings{"label '" + name + "' is not one of --named_labels"})) << line;
    EXPECT_FALSE(p.ex.labeled) << line;
    EXPECT_TRUE(p.ex.classes.empty()) << line;
    EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass) << line;
    EXPECT_EQ(p.ex.features.size(), 1u) << line;  // the features are kept
  }
}

TEST(VwTextMulticlass, ANonIntegerLabelWarns) {
  const ParseOptions options = mode(LabelMode::kMulticlass);
  for (const char* label : {"3x", "-1", "+1", "1.0", "1e2", "x", "4294967296", "0x10"}) {
    const Parsed p = vw(std::string(label) + " |f a", options);
    EXPECT_EQ(p.warnings,
              (Strings{"label '" + std::string(label) + "' is not a class number (a non-negative integer)"}))
        << label;
    EXPECT_FALSE(p.ex.labeled) << label;
    EXPECT_TRUE(p.ex.classes.empty()) << label;
    EXPECT_EQ(p.ex.features.size(), 1u) << label;
  }
}

TEST(VwTextMulticlass, ThreeTokensWarn) {  // no `initial` in a multiclass label
  const ParseOptions options = mode(LabelMode::kMulticlass);
  Parsed p = vw("1 2 3 |f a", options);
  EXPECT_EQ(p.warnings, (Strings{"3 is too many tokens for a multiclass label: 1 2 3"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.weight, 1.0f);
  EXPECT_EQ(p.ex.features.size(), 1u);
  p = vw("1  2 3 4 tg|f a", options);
  EXPECT_EQ(p.warnings, (Strings{"4 is too many tokens for a multiclass label: 1 2 3 4"}));
  EXPECT_EQ(p.ex.tag, "tg");
  EXPECT_FALSE(p.ex.labeled);
}

TEST(VwTextMulticlass, NoLabelIsUnlabeledWithoutAWarning) {
  const ParseOptions options = mode(LabelMode::kMulticlass);
  for (const char* line : {"|f a", " |f a", "'tg |f a"}) {
    const Parsed p = vw(line, options);
    EXPECT_TRUE(p.warnings.empty()) << line;
    EXPECT_FALSE(p.ex.labeled) << line;
    EXPECT_TRUE(p.ex.classes.empty()) << line;
    EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass) << line;
  }
  EXPECT_TRUE(vw("", options).ex.empty);
}

TEST(VwTextMulticlass, ScalarModeIsTheDefault) {
  const Parsed p = vw("3 |f a", ParseOptions{});
  EXPECT_EQ(p.ex.label_kind, LabelKind::kScalar);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.label, 3.0f);
}

// ---- VW text, cost-sensitive ------------------------------------------------------------------------------

TEST(VwTextCostSensitive, CostsInTheOrderWritten) {
  const Parsed p = vw("2:0.5 1:1 3 |f a", mode(LabelMode::kCostSensitive));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label_kind, LabelKind::kCostSensitive);
  // A class without a cost has the unknown cost, FLT_MAX (VW's convention).
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.5f}, {1, 1.0f}, {3, FLT_MAX}}));
  EXPECT_EQ(p.ex.label, 0.0f);
  EXPECT_EQ(p.ex.weight, 1.0f);
  expect_same_features(p.ex, vw("2:0.5 1:1 3 |f a", ParseOptions{}).ex);
}

TEST(VwTextCostSensitive, ManyClassesNegativeCostsAndTags) {
  const ParseOptions options = mode(LabelMode::kCostSensitive);
  Parsed p = vw("1:1 2:-2 3:3e-1 4:4 0:0 'id |f a", options);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(classes(p.ex), (Classes{{1, 1.0f}, {2, -2.0f}, {3, 0.3f}, {4, 4.0f}, {0, 0.0f}}));
  EXPECT_EQ(p.ex.tag, "id");
  // The token touching the bar is the tag, as in every mode.
  p = vw("1:0.5 2:1|f a", options);
  EXPECT_EQ(p.ex.tag, "2:1");
  EXPECT_EQ(classes(p.ex), (Classes{{1, 0.5f}}));
}

TEST(VwTextCostSensitive, AllCostsUnknownIsATestExample) {
  const Parsed p = vw("1 2 3 |f a", mode(LabelMode::kCostSensitive));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.label_kind, LabelKind::kCostSensitive);
  EXPECT_EQ(classes(p.ex), (Classes{{1, FLT_MAX}, {2, FLT_MAX}, {3, FLT_MAX}}));
  EXPECT_EQ(p.ex.features.size(), 1u);
  // No label at all: unlabeled, no classes, no warning.
  const Parsed none = vw("|f a", mode(LabelMode::kCostSensitive));
  EXPECT_TRUE(none.warnings.empty());
  EXPECT_FALSE(none.ex.labeled);
  EXPECT_TRUE(none.ex.classes.empty());
  EXPECT_EQ(none.ex.label_kind, LabelKind::kCostSensitive);
}

TEST(VwTextCostSensitive, NamedLabels) {
  const ParseOptions options = mode(LabelMode::kCostSensitive, {"a", "b", "c"});
  Parsed p = vw("a:0 b:1 |f x", options);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(classes(p.ex), (Classes{{1, 0.0f}, {2, 1.0f}}));
  p = vw("c b:2 |f x", options);
  EXPECT_EQ(classes(p.ex), (Classes{{3, FLT_MAX}, {2, 2.0f}}));
  EXPECT_TRUE(p.ex.labeled);
  p = vw("a:0 d:1 |f x", options);
  EXPECT_EQ(p.warnings, (Strings{"label 'd' is not one of --named_labels"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
}

TEST(VwTextCostSensitive, BadCostWarnsAndClearsTheClasses) {
  const ParseOptions options = mode(LabelMode::kCostSensitive);
  for (const char* token : {"1:x", "1:", "1:0.5:2", "1:inf", "1:nan", "1:0.5x"}) {
    const Parsed p = vw("2:1 " + std::string(token) + " 3:0 |f a", options);
    EXPECT_EQ(p.warnings, (Strings{"bad cost in cost-sensitive label '" + std::string(token) +
                                   "' (class:cost expected)"}))
        << token;
    EXPECT_FALSE(p.ex.labeled) << token;
    EXPECT_TRUE(p.ex.classes.empty()) << token;
    EXPECT_EQ(p.ex.label_kind, LabelKind::kCostSensitive) << token;
    EXPECT_EQ(p.ex.features.size(), 1u) << token;
  }
}

TEST(VwTextCostSensitive, BadClassWarnsAndClearsTheClasses) {
  const ParseOptions options = mode(LabelMode::kCostSensitive);
  for (const char* klass : {"x", "", "-1", "1.5"}) {
    const Parsed p = vw("2:1 " + std::string(klass) + ":0.5 |f a", options);
    EXPECT_EQ(p.warnings,
              (Strings{"label '" + std::string(klass) + "' is not a class number (a non-negative integer)"}))
        << klass;
    EXPECT_FALSE(p.ex.labeled) << klass;
    EXPECT_TRUE(p.ex.classes.empty()) << klass;
  }
}

// ---- libsvm and CSV ---------------------------------------------------------------------------------------

TEST(LibsvmMulticlass, IntegerAndNamedLabels) {
  Parsed p = run(parse_libsvm_line, "3 1:0.5 7:1", mode(LabelMode::kMulticlass));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass);
  EXPECT_EQ(classes(p.ex), (Classes{{3, 0.0f}}));
  EXPECT_EQ(p.ex.label, 0.0f);
  expect_same_features(p.ex, run(parse_libsvm_line, "3 1:0.5 7:1", ParseOptions{}).ex);

  const ParseOptions named = mode(LabelMode::kMulticlass, {"neg", "pos"});
  p = run(parse_libsvm_line, "pos 1:0.5", named);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.0f}}));
  p = run(parse_libsvm_line, "maybe 1:0.5", named);
  EXPECT_EQ(p.warnings, (Strings{"label 'maybe' is not one of --named_labels"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.features.size(), 1u);

  p = run(parse_libsvm_line, "+1 1:0.5", mode(LabelMode::kMulticlass));
  EXPECT_EQ(p.warnings, (Strings{"label '+1' is not a class number (a non-negative integer)"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.features.size(), 1u);
}

TEST(LibsvmMulticlass, CostSensitiveNeedsVwText) {
  const Parsed p = run(parse_libsvm_line, "1:0.5 1:1", mode(LabelMode::kCostSensitive));
  EXPECT_EQ(p.warnings, (Strings{"cost-sensitive labels need VW text input"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.features.size(), 1u);
}

ParseOptions table(std::string_view header, ParseOptions options) {
  CsvOptions csv;
  csv.label_column = "y";
  options.csv = make_csv_schema(header, csv, options);
  return options;
}

TEST(CsvMulticlass, IntegerAndNamedLabels) {
  const ParseOptions numeric = table("x,y", mode(LabelMode::kMulticlass));
  Parsed p = run(parse_csv_line, "1.5,4", numeric);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label_kind, LabelKind::kMulticlass);
  EXPECT_EQ(classes(p.ex), (Classes{{4, 0.0f}}));
  EXPECT_EQ(p.ex.label, 0.0f);
  expect_same_features(p.ex, run(parse_csv_line, "1.5,4", table("x,y", ParseOptions{})).ex);
  p = run(parse_csv_line, "1.5, 2 ", numeric);  // the label cell is trimmed, as in scalar mode
  EXPECT_EQ(classes(p.ex), (Classes{{2, 0.0f}}));
  p = run(parse_csv_line, "1.5,2.5", numeric);
  EXPECT_EQ(p.warnings, (Strings{"label '2.5' is not a class number (a non-negative integer)"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.features.size(), 1u);

  const ParseOptions named =
      table("x,y", mode(LabelMode::kMulticlass, {"setosa", "versicolor", "virginica"}));
  p = run(parse_csv_line, "1.5,virginica", named);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(classes(p.ex), (Classes{{3, 0.0f}}));
  p = run(parse_csv_line, "1.5,\"setosa\"", named);  // quotes are not part of the cell
  EXPECT_EQ(classes(p.ex), (Classes{{1, 0.0f}}));
  p = run(parse_csv_line, "1.5,rose", named);
  EXPECT_EQ(p.warnings, (Strings{"label 'rose' is not one of --named_labels"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
}

TEST(CsvMulticlass, CostSensitiveNeedsVwText) {
  const Parsed p = run(parse_csv_line, "1.5,1:0.5", table("x,y", mode(LabelMode::kCostSensitive)));
  EXPECT_EQ(p.warnings, (Strings{"cost-sensitive labels need VW text input"}));
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_TRUE(p.ex.classes.empty());
  EXPECT_EQ(p.ex.features.size(), 1u);
}

}  // namespace
}  // namespace lepus
