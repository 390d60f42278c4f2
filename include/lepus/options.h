// Options declared by registry rows (learners), independent of any command-line library: src/cli turns
// OptionSpecs into Boost.Program_options descriptions and hands the parsed values back as OptionValues.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

namespace lepus {

struct OptionSpec {
  enum class Kind { kFlag, kNumber, kText };
  std::string name;        // long name without dashes: "learning_rate"
  std::string short_name;  // one letter or empty: "l"
  Kind kind = Kind::kFlag;
  std::string default_value;  // text; empty for flags and for "no default"
  std::string help;
};

class OptionValues {
 public:
  void set(const std::string& name, std::string value, bool given) {
    values_[name] = std::move(value);
    if (given) given_.insert(name);
  }
  bool given(const std::string& name) const { return given_.count(name) != 0; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::string& text(const std::string& name) const;   // throws ConfigError when absent
  double number(const std::string& name) const;             // throws ConfigError when not a number
  bool flag(const std::string& name) const { return given(name); }
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> given_;
};

}  // namespace lepus
