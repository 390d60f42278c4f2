// Fuzz target: CSV and TSV tables (formats/csv.h): the schema from the first line (a bad header is a
// legitimate ConfigError), then every other line as a row, then the feature space.
// Input: byte 0 = table options (below), bytes 1-2 = parse and feature-space options (fuzz_lines.h; bit 5 of
// byte 2 sets --text_namespace w), then the table.
//   byte 0: bit 0 TSV, bit 1 --no_header, bits 2-3 label column "0" / "-1" / "label" / "1",
//           bit 4 ignore column 2, bit 5 categorical column -2, bit 6 text column 1, bit 7 csv namespace "".
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "formats/csv.h"
#include "fuzz_lines.h"
#include "lepus/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lepus;
  if (size < 3) return 0;
  const uint8_t c = data[0];
  CsvOptions csv;
  if (c & 1) {
    csv.delimiter = '\t';
    csv.quoted = false;
  }
  csv.header = !(c & 2);
  static const char* const kLabels[4] = {"0", "-1", "label", "1"};
  csv.label_column = kLabels[(c >> 2) & 3];
  if (c & 16) csv.ignore_columns = {"2"};
  if (c & 32) csv.categorical = {"-2"};
  if (c & 64) csv.text_columns = {"1"};
  if (c & 128) csv.csv_namespace = "";
  if (data[2] & 32) csv.text_namespace.assign(1, 'w');  // GCC 12 -Wrestrict false positive on = "w"
  const char* letters = (c & 128) ? " wt" : "cwt";

  const std::string_view text(reinterpret_cast<const char*>(data + 3), size - 3);
  const size_t nl = text.find('\n');
  const std::string_view first = text.substr(0, nl);
  const std::string_view rest = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);

  std::shared_ptr<const CsvSchema> schema;
  try {
    const std::unique_ptr<char[]> copy(new char[first.size()]);  // exact size, never null
    if (!first.empty()) std::memcpy(copy.get(), first.data(), first.size());
    schema = make_csv_schema(std::string_view(copy.get(), first.size()), csv,
                             fuzz::parse_options(data[1], letters));
  } catch (const ConfigError&) {
    return 0;
  }
  FUZZ_CHECK(!schema->columns.empty());
  FUZZ_CHECK(schema->label < schema->columns.size());
  FUZZ_CHECK(schema->columns[schema->label].role == CsvSchema::Role::kLabel);

  fuzz::run_lines(data[1], data[2], rest, letters,
                  [&schema](std::string_view line, ParseOptions p, Example& ex, WarningSink& sink) {
                    p.csv = schema;
                    parse_csv_line(line, p, ex, sink);
                    if (!ex.empty) {  // every row is labeled, weight 1, no base prediction
                      FUZZ_CHECK(ex.labeled);
                      FUZZ_CHECK(ex.weight == 1.0f && ex.initial == 0.0f);
                    }
                    for (const auto& g : ex.groups) {
                      bool known = g.ns == schema->group;
                      for (const auto& col : schema->columns)
                        known |= col.role == CsvSchema::Role::kText && col.text_group == g.ns;
                      FUZZ_CHECK(known);
                    }
                  });
  return 0;
}
