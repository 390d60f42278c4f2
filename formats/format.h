// What every input-format parser shares: its options and the sink for VW-style warnings.
// A parser is a pure function from one line of text to one Example: no I/O, no threads, no globals.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

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
};

}  // namespace lepus
