#include "lepus/options.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "lepus/errors.h"

namespace lepus {

const std::string& OptionValues::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw ConfigError("option --" + name + " has no value");
  return it->second;
}

std::optional<double> read_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

double OptionValues::number(const std::string& name) const {
  const std::string& s = text(name);
  const std::optional<double> v = read_number(s);
  if (!v) throw ConfigError("option --" + name + " expects a number, got '" + s + "'");
  return *v;
}

namespace {
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15 && std::fabs(v) >= 1e6)  // a bound such as 2^32 - 1, in full
    return std::to_string(static_cast<int64_t>(v));
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string OptionSpec::Range::text() const {
  const bool low = std::isfinite(lo), high = std::isfinite(hi);
  if (low && high)
    return std::string(lo_open ? "in (" : "in [") + number_text(lo) + ", " + number_text(hi) +
           (hi_open ? ")" : "]");
  if (low) return (lo_open ? "> " : ">= ") + number_text(lo);
  if (high) return (hi_open ? "< " : "<= ") + number_text(hi);
  return "any finite number";
}

void check_option_value(const OptionSpec& spec, const std::string& text) {
  if (spec.kind == OptionSpec::Kind::kNumber) {
    std::optional<double> v;
    if (!spec.whole) {
      v = read_number(text);
    } else if (spec.range.lo >= 0.0) {
      if (const auto w = read_whole<uint64_t>(text)) v = static_cast<double>(*w);
    } else if (const auto w = read_whole<int64_t>(text)) {
      v = static_cast<double>(*w);
    }
    if (!v || !spec.range.contains(*v))
      throw ConfigError("--" + spec.name + " must be a " + (spec.whole ? "whole " : "") + "number " +
                        spec.range.text() + ", got '" + text + "'");
  } else if (spec.kind == OptionSpec::Kind::kText && !spec.choices.empty()) {
    bool known = false;
    std::string list;
    for (const auto& c : spec.choices) {
      known = known || c == text;
      list += (list.empty() ? "" : ", ") + c;
    }
    if (!known) throw ConfigError("unknown --" + spec.name + " '" + text + "' (choose " + list + ")");
  }
}

void check_option_values(const std::vector<OptionSpec>& specs, const OptionValues& values) {
  for (const auto& spec : specs)
    if (values.has(spec.name)) check_option_value(spec, values.text(spec.name));
}

std::string accepted_text(const OptionSpec& spec) {
  if (spec.kind == OptionSpec::Kind::kNumber && spec.whole)
    return " (a whole number " + spec.range.text() + ")";
  if (spec.kind == OptionSpec::Kind::kNumber &&
      (std::isfinite(spec.range.lo) || std::isfinite(spec.range.hi)))
    return " (" + spec.range.text() + ")";
  if (spec.choices.empty()) return "";
  std::string s = " (one of:";
  for (const auto& c : spec.choices) s += " " + c;
  return s + ")";
}

}  // namespace lepus
