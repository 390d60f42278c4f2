// Class labels of the multiclass and cost-sensitive modes (VW's --oaa, --csoaa): the --named_labels table and
// the reading of one class token, shared by every parser.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lepus {

class WarningSink;

// --named_labels a,b,c: class 1 is "a", 2 is "b", ... (VW's named labels are always 1-based, whatever
// --indexing says).
class NamedLabels {
 public:
  // Throws ConfigError on an empty name, a repeated name, or no names.
  explicit NamedLabels(std::vector<std::string> names);
  uint32_t find(std::string_view name) const;     // the class (1..K), or 0 if unknown
  const std::string& name(uint32_t klass) const;  // klass in 1..K; throws Error otherwise
  uint32_t size() const { return static_cast<uint32_t>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  // The classes ordered by name: find() is a binary search, so a lookup per example allocates nothing and
  // stays cheap for thousands of classes. Classes, not views, so that a copy stays valid.
  std::vector<uint32_t> by_name_;
};

// Parses VW's comma-separated list ("a,b,c"; items are not trimmed, as in VW). Throws ConfigError on an empty
// item (so also on an empty list, a leading or trailing comma, or ",,").
std::vector<std::string> split_named_labels(std::string_view list);

// Reads one class token: with `named`, the class of that name; without, a non-negative decimal integer
// (digits only; 0 is allowed for VW's --indexing 0). On an unknown name or a malformed number it warns
// (naming the token) and returns false; *klass is then unchanged.
bool read_class_label(std::string_view token, const NamedLabels* named, uint32_t* klass,
                      WarningSink& warnings);

}  // namespace lepus
