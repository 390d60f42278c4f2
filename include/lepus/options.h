// Options declared by registry rows (learners), independent of any command-line library: src/cli turns
// OptionSpecs into Boost.Program_options descriptions and hands the parsed values back as OptionValues.
#pragma once
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace lepus {

struct OptionSpec {
  enum class Kind { kFlag, kNumber, kText };
  // The numbers a kNumber option accepts: finite, within [lo, hi], an end excluded when open.
  struct Range {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    bool lo_open = false, hi_open = false;
    bool contains(double v) const {
      return std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
    }
    std::string text() const;  // "in (0, 2)", "> 0", "in [1e-30, 1e+30]"
    static Range above(double lo) { return {lo, std::numeric_limits<double>::infinity(), true}; }
  };
  std::string name;        // long name without dashes: "learning_rate"
  std::string short_name;  // one letter or empty: "l"
  Kind kind = Kind::kFlag;
  std::string default_value;  // text; empty for flags and for "no default"
  std::string help;
  Range range;  // kNumber: declared once, checked by check_option_values, shown in --help
  std::vector<std::string> choices;  // kText: the values it accepts (empty: free text)
  // kNumber: values that switch the learner into another mode (kons's --budget), which the registry-wide
  // tests run as variants as they do each choice.
  std::vector<std::string> modes;
  bool whole = false;  // kNumber: a whole number (a count, a size), read by read_whole
};

// The one reading of a number in lepus's options (the command line, learners' options, a model's saved
// options): the whole text, with no space around it, as a finite number (decimal or exponent form), else
// nullopt. read_whole reads a whole number: optional sign and digits only, within T's range (an unsigned T
// refuses a minus sign).
std::optional<double> read_number(const std::string& text);
template <typename T>
std::optional<T> read_whole(const std::string& text) {
  static_assert(std::is_integral_v<T>);
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  if (first == last || (std::is_unsigned_v<T> && *first == '-')) return std::nullopt;
  T v{};
  const auto [end, error] = std::from_chars(first, last, v);
  if (error != std::errc() || end != last) return std::nullopt;
  return v;
}

class OptionValues {
 public:
  void set(const std::string& name, std::string value, bool given) {
    values_[name] = std::move(value);
    if (given) given_.insert(name);
  }
  bool given(const std::string& name) const { return given_.count(name) != 0; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::string& text(const std::string& name) const;  // throws ConfigError when absent
  double number(const std::string& name) const;            // throws ConfigError when not a number
  bool flag(const std::string& name) const { return given(name); }
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> given_;
};

// Throws ConfigError naming the option unless every value in `values` of the options in `specs` is a finite
// number within its range (kNumber) or one of its choices (kText with choices). Run before any data is read.
void check_option_values(const std::vector<OptionSpec>& specs, const OptionValues& values);
// The same check of one value of one option (the command line's own options use it too).
void check_option_value(const OptionSpec& spec, const std::string& text);
// What an option accepts, as --help shows it: " (> 0)", " (a whole number in [1, 32])", " (one of: a b)"; empty
// for free text and flags.
std::string accepted_text(const OptionSpec& spec);

}  // namespace lepus
