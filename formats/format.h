// What every input-format parser shares: its options and the sink for VW-style warnings.
// A parser is a pure function from one line of text to one Example: no I/O, no threads, no globals.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "formats/named_labels.h"
#include "lepus/example.h"
#include "lepus/hashing.h"

namespace lepus {

struct CsvSchema;

// Receives the text of a recoverable input problem (VW's wording, without "[warning]" and without the
// location); the caller adds file:line, counts it, or throws under --strict_parse.
class WarningSink {
 public:
  virtual ~WarningSink() = default;
  virtual void warn(const std::string& message) = 0;
};

// What the label field holds. Every parser gives each example (but an empty line) the matching
// Example::label_kind, labeled or not, so a reduction can rely on it.
enum class LabelMode : uint8_t {
  kScalar,         // a number (the default): Example::label
  kMulticlass,     // --oaa: one class, `class [weight]` in VW text; Example::classes = {{class, 0}}
  kCostSensitive,  // --csoaa: `class[:cost] ...` in VW text only; a class without a cost has cost FLT_MAX
};

// The Example::label_kind a mode gives (the two enums list the same kinds in the same order).
inline LabelKind label_kind_of(LabelMode mode) {
  switch (mode) {
    case LabelMode::kMulticlass: return LabelKind::kMulticlass;
    case LabelMode::kCostSensitive: return LabelKind::kCostSensitive;
    case LabelMode::kScalar: break;
  }
  return LabelKind::kScalar;
}

struct ParseOptions {
  HashMode hash_mode = HashMode::kStrings;
  uint32_t hash_seed = 0;
  // --ignore / --keep resolved to one table: true means every feature of that group (first byte) is dropped.
  std::array<bool, 256> drop_group{};
  std::string libsvm_namespace = "f";  // --libsvm_namespace
  // --positive_label V: a label whose text equals V becomes 1, every other label -1 (all formats).
  bool has_positive_label = false;
  std::string positive_label;
  // --format csv / tsv: the table's schema, built once from its header before parsing starts.
  std::shared_ptr<const CsvSchema> csv;
  LabelMode label_mode = LabelMode::kScalar;  // --oaa: kMulticlass, --csoaa: kCostSensitive
  std::shared_ptr<const NamedLabels> named;   // --named_labels (non-scalar modes); null: numeric class labels
  // --audit, --invert_hash, --audit_regressor: each feature's name goes to Example::names (else nothing is kept).
  bool keep_names = false;
};

// The label field of a format with a single label field (libsvm, CSV) in a non-scalar mode. kMulticlass: the
// field is the class (read_class_label); a bad one warns and leaves ex unlabeled. kCostSensitive: a warning
// and unlabeled, since cost-sensitive labels exist in VW text only. Sets ex.label_kind, and on success
// ex.labeled and ex.classes = {{class, 0}}.
void read_class_field(std::string_view field, const ParseOptions& options, Example& ex,
                      WarningSink& warnings);

}  // namespace lepus
