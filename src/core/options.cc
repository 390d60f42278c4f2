#include "lepus/options.h"

#include <cstdlib>

#include "lepus/errors.h"

namespace lepus {

const std::string& OptionValues::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw ConfigError("option --" + name + " has no value");
  return it->second;
}

double OptionValues::number(const std::string& name) const {
  const std::string& s = text(name);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    throw ConfigError("option --" + name + " expects a number, got '" + s + "'");
  return v;
}

}  // namespace lepus
