// Class labels of the multiclass and cost-sensitive modes; see named_labels.h.
#include "formats/named_labels.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "formats/format.h"
#include "lepus/errors.h"

namespace lepus {

NamedLabels::NamedLabels(std::vector<std::string> names) : names_(std::move(names)) {
  if (names_.empty()) throw ConfigError("--named_labels needs at least one label");
  // A class is a uint32_t and 0 means "unknown" to find(), so K must fit below 2^32.
  if (names_.size() >= std::numeric_limits<uint32_t>::max())
    throw ConfigError("--named_labels: too many labels");
  by_name_.reserve(names_.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i].empty()) throw ConfigError("--named_labels: label " + std::to_string(i + 1) + " is empty");
    by_name_.push_back(static_cast<uint32_t>(i + 1));
  }
  const auto name_of = [this](uint32_t k) -> const std::string& { return names_[k - 1]; };
  std::sort(by_name_.begin(), by_name_.end(),
            [&](uint32_t a, uint32_t b) { return name_of(a) < name_of(b); });
  for (size_t i = 1; i < by_name_.size(); ++i) {
    const uint32_t a = std::min(by_name_[i - 1], by_name_[i]), b = std::max(by_name_[i - 1], by_name_[i]);
    if (name_of(a) == name_of(b)) {
      throw ConfigError("--named_labels: label '" + name_of(a) + "' is listed twice (classes " +
                        std::to_string(a) + " and " + std::to_string(b) + ")");
    }
  }
}

uint32_t NamedLabels::find(std::string_view name) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), name,
      [this](uint32_t k, std::string_view key) { return std::string_view(names_[k - 1]) < key; });
  return it != by_name_.end() && names_[*it - 1] == name ? *it : 0;
}

const std::string& NamedLabels::name(uint32_t klass) const {
  if (klass == 0 || klass > names_.size()) {
    throw Error("class " + std::to_string(klass) + " is not one of the " + std::to_string(names_.size()) +
                " --named_labels (1.." + std::to_string(names_.size()) + ")");
  }
  return names_[klass - 1];
}

std::vector<std::string> split_named_labels(std::string_view list) {
  std::vector<std::string> names;
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (item.empty()) {
      throw ConfigError("--named_labels: item " + std::to_string(names.size() + 1) +
                        " is empty (expected a comma-separated list such as a,b,c)");
    }
    names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return names;
}

bool read_class_label(std::string_view token, const NamedLabels* named, uint32_t* klass,
                      WarningSink& warnings) {
  if (named != nullptr) {
    const uint32_t k = named->find(token);
    if (k == 0) {
      warnings.warn("label '" + std::string(token) + "' is not one of --named_labels");
      return false;
    }
    *klass = k;
    return true;
  }
  // from_chars takes no sign and no spaces, so anything but plain digits (and values past 2^32 - 1) fails.
  uint32_t k = 0;
  const char* const end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(token.data(), end, k);
  if (token.empty() || error != std::errc() || stop != end) {
    warnings.warn("label '" + std::string(token) + "' is not a class number (a non-negative integer)");
    return false;
  }
  *klass = k;
  return true;
}

void read_class_field(std::string_view field, const ParseOptions& options, Example& ex,
                      WarningSink& warnings) {
  ex.label_kind = label_kind_of(options.label_mode);
  if (options.label_mode == LabelMode::kCostSensitive) {
    warnings.warn("cost-sensitive labels need VW text input");
    return;
  }
  uint32_t klass = 0;
  if (!read_class_label(field, options.named.get(), &klass, warnings)) return;
  ex.labeled = true;
  ex.label = 0.0f;
  ex.classes.push_back(ClassCost{klass, 0.0f});
}

}  // namespace lepus
