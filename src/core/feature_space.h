// The feature space: what the learner sees of a parsed example. Adds the constant (bias) feature and
// expands -q / --cubic / --interactions (with the ':' wildcard) into interaction features, exactly in VW's
// generation order (VW 9.11.2's): linear features by group, the constant, then each interaction in list
// order, nested loops in term order, self-pairs included for adjacent equal terms.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lepus/errors.h"
#include "lepus/example.h"
#include "lepus/model_io.h"

namespace lepus {

struct FeatureSpaceOptions {
  std::vector<std::string> quadratic;     // -q ab
  std::vector<std::string> cubic;         // --cubic abc
  std::vector<std::string> interactions;  // --interactions abc...
  std::array<bool, 256> ignore_linear{};  // --ignore_linear: groups kept only as interaction terms
  bool constant = true;                   // --noconstant turns it off
  bool permutations = false;              // --permutations: no i<=j reduction for equal adjacent terms
  bool leave_duplicates = false;          // --leave_duplicate_interactions
  bool invariant_norm = false;            // compute Example::invariant_norm (plain --invariant)
  uint64_t max_features = 10'000'000;  // --max_features: features one example may have, interactions included
  // --ngram / --skips: per namespace, n-grams of 2..n consecutive features with up to k skipped between (0:
  // none).
  std::array<uint32_t, 256> ngram{};
  std::array<uint32_t, 256> skips{};
  // --oaa / --csoaa over one table (Learner::share_table): K problems share the slots, class i at index + i,
  // so every linear index (the constant's too) is multiplied by K before the interactions are formed from
  // them (VW's feature width); 1 otherwise.
  uint64_t multiplier = 1;
  // --audit, --invert_hash, --audit_regressor: the parser kept each feature's name (Example::names), and
  // expand names what it adds (n-grams, the constant, interactions) so every feature has one.
  bool keep_names = false;
};

// An example whose interactions would exceed --max_features (the driver names its file and line).
class FeatureLimitError : public Error {
 public:
  using Error::Error;
};

// The most namespaces one interaction may have.
inline constexpr size_t kMaxInteractionOrder = 16;

class FeatureSpace {
 public:
  explicit FeatureSpace(const FeatureSpaceOptions& options);  // throws ConfigError on a bad spec
  FeatureSpace(const FeatureSpace&) = delete;                 // list_ points into this object
  FeatureSpace& operator=(const FeatureSpace&) = delete;

  // Turns a parsed example (linear features only) into the learner's full feature list.
  void expand(Example& ex);

  // The interaction list in generation order: with wildcards, the one the last expanded example used (VW's
  // list over the namespaces seen so far, restricted to those the example has, which is all that generates).
  const std::vector<std::string>& interactions() const { return *list_; }
  // Whether expand adds features beyond the constant (interactions or n-grams); when not, an example may be
  // expanded where it lies.
  bool adds_features() const { return !explicit_.empty() || !wildcards_.empty() || any_ngram_; }
  // The state a model keeps: the namespaces the ':' wildcard has seen, so a resumed run expands alike.
  void save(ModelWriter& out) const;
  void load(ModelReader& in);  // throws ModelFormatError

  // "creating quadratic features for pairs: ff ab" and the like, for the preamble.
  std::vector<std::string> describe() const;
  // Interaction values whose product overflowed float and was clamped to +-FLT_MAX.
  uint64_t clamped_values() const { return clamped_; }

  // Sorts and de-duplicates an interaction list as VW does (exposed for tests).
  static std::vector<std::string> normalize(std::vector<std::string> list, bool leave_duplicates);

 private:
  void refresh_wildcards(const Example& ex);
  const std::vector<std::string>& interactions_for(const Example& ex);
  void generate(Example& ex, const unsigned char* terms, size_t n);
  float invariant_norm(const Example& ex) const;
  void add_ngrams(Example& ex);

  FeatureSpaceOptions opt_;
  std::vector<std::string> explicit_;   // normalised, without wildcards
  std::vector<std::string> wildcards_;  // specs containing ':'
  std::array<bool, 256> seen_{};
  std::vector<unsigned char> seen_list_;
  std::array<int, 256> group_of_{};  // byte -> index into ex.groups (+1), 0 = absent; reset after use
  bool any_ignore_linear_ = false;
  bool any_ngram_ = false;
  FeatureVector ngram_out_;  // add_ngrams' rebuilt feature list (swapped with the example's)
  std::vector<FeatureGroup> ngram_groups_;
  std::vector<size_t> gram_mask_;
  uint64_t clamped_ = 0;
  // Wildcards: the interaction list per set of namespaces present (sorted bytes), and the one in use.
  std::unordered_map<std::string, std::vector<std::string>> by_present_;
  const std::vector<std::string>* list_ = &explicit_;
};

}  // namespace lepus
