// One parsed example: label, importance weight, base prediction, tag and hashed features.
// Features are stored flat: the linear features grouped by feature group (group order = first appearance,
// then the constant), followed by the interaction features appended by FeatureSpace::expand.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lepus/default_init_allocator.h"

namespace lepus {

struct Feature {
  uint64_t index;  // unmasked parse or interaction index; a learner masks it to its 2^b slots
  float value;
};

// An example's features; resize() leaves new ones unwritten (the VW text parser and interaction generation write
// them in place).
using FeatureVector = std::vector<Feature, DefaultInitAllocator<Feature>>;

// A contiguous run of linear features that share a feature group (the namespace's first byte).
struct FeatureGroup {
  unsigned char ns;
  uint32_t begin;
  uint32_t end;
};

// What the label is. A scalar learner reads only `label`; the multiclass and cost-sensitive reductions (VW's --oaa,
// --csoaa) are wrappers that own base learners, read `classes` and hand each base a scalar label, so no learner
// changes for them.
enum class LabelKind : uint8_t {
  kScalar,         // `label` (regression, or -1/1 for a binary loss)
  kMulticlass,     // one class: classes[0].klass (1-based, as VW's --oaa), cost 0
  kCostSensitive,  // every listed class with its cost (VW's "1:0.5 2:1.0"); classes not listed are not allowed
};

// --audit, --invert_hash, --audit_regressor: one term of a feature's name as VW keeps it (its audit strings).
struct NamePart {
  std::string ns;    // the namespace as written; empty for the default namespace (and the constant)
  std::string name;  // the feature's name (an n-gram's names joined by '^'); empty for an anonymous feature
  std::string str;   // a string value (`color:red`: name "color", str "red")
};
// A linear feature's name has one part, an interaction's one per term.
using FeatureName = std::vector<NamePart>;

struct ClassCost {
  uint32_t klass;
  float cost;
};

struct Example {
  float label = 0.0f;
  bool labeled = false;
  LabelKind label_kind = LabelKind::kScalar;
  std::vector<ClassCost> classes;  // kMulticlass and kCostSensitive only
  float weight = 1.0f;             // importance weight
  float initial = 0.0f;            // base prediction added to the score
  std::string tag;

  FeatureVector features;            // linear (grouped), then interactions
  std::vector<FeatureGroup> groups;  // ranges of the linear features, in group order
  uint32_t num_linear = 0;           // features[0, num_linear) are linear
  uint32_t num_reported = 0;    // VW's "current features": parsed + generated (incl. --ignore_linear ones)
  float invariant_norm = 0.0f;  // sum of x^2 by VW's group recurrence (only for plain --invariant)

  // Only when names are kept (ParseOptions::keep_names): one per feature, parallel to `features`; else empty.
  std::vector<FeatureName> names;

  uint64_t line = 0;   // 1-based line number in its source
  bool empty = false;  // an empty line: no example, but it advances the holdout counter

  void clear() {
    label = 0.0f;
    labeled = false;
    label_kind = LabelKind::kScalar;
    classes.clear();
    weight = 1.0f;
    initial = 0.0f;
    tag.clear();
    features.clear();
    groups.clear();
    num_linear = 0;
    num_reported = 0;
    invariant_norm = 0.0f;
    names.clear();
    empty = false;
  }
};

}  // namespace lepus
