// What the format parsers' tests share: a warning sink that keeps every message, and a parse's result.
#pragma once
#include <string>
#include <vector>

#include "formats/format.h"
#include "lepus/example.h"

namespace lepus::testing {

class CollectingSink : public WarningSink {
 public:
  void warn(const std::string& message) override { messages.push_back(message); }
  std::vector<std::string> messages;
};

struct Parsed {
  Example ex;
  std::vector<std::string> warnings;
};

}  // namespace lepus::testing
