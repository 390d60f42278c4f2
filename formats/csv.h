// CSV (RFC 4180 quoting) and TSV (quotes are literal characters) tables with string labels, ids, categorical
// codes and free text, read without conversion. The header (or, with --no_header, the first row's cell count)
// is turned once into a CsvSchema; every row is then parsed purely against it.
//
// A row becomes one example:
//   - the label column gives the label (read as VW reads labels; --positive_label maps text labels to +-1);
//     every row is labeled, weight 1, initial 0; in a non-scalar ParseOptions::label_mode the cell is read
//     by read_class_field (format.h): a class number or name, a bad one leaving the row unlabeled with a
//     warning;
//   - an ignored column is skipped;
//   - an empty cell (or one holding only spaces and TABs) is dropped;
//   - a numeric cell of a non-categorical column becomes the feature NAME with that value, NAME being the
//     column's name. Numeric: after trimming spaces and TABs, VW's float reader consumes all of the cell, the
//     value is finite, and the cell starts like a number ([sign] ['.'] digit), so "E", "-" or "." (a grade,
//     a missing-value mark) stay strings instead of reading as VW's 0. A value of 0 gives no feature, as in
//     VW. A cell that reads as a number beyond float range is a string: ids such as 7e091613 (hex ids in
//     click logs), which VW's int8 exponent would read as 7e-35, are categories;
//   - any other cell becomes the feature "NAME=VALUE" with value 1, VALUE being the cell's exact text (quotes
//     removed, not trimmed), hashed as that text, so a hand conversion `|c NAME=VALUE` hashes alike;
//   - those features go to one namespace (--csv_namespace, default "c", so -q cc works; "" is VW's default
//     namespace ' ');
//   - a text column is split into lower-cased word tokens (maximal runs of ASCII letters and digits and of
//     bytes >= 0x80; ASCII letters lower-cased), each a feature of value 1 in the column's own namespace: the
//     column name's first byte ('t' for an empty name), or the whole --text_namespace when given.
// Groups: the CSV namespace's features first (column order), then the text namespaces in order of first
// appearance among the text columns, each contiguous; a text namespace whose first byte is the CSV
// namespace's shares its group (after the CSV features), as VW would regroup `|c a:1 |cat word`.
// A record is a line, except that a quoted cell may hold line ends (RFC 4180, as Python's csv module and
// pandas read it): the reader then joins the lines into one record (csv_scan below). A row with the wrong
// number of cells, with an unterminated quote (the record then runs to the end of the input) or text after a
// closing quote, or with a label cell that is empty, is malformed: a warning naming the record's first line,
// and the record gives no example (ex.empty).
//
// Column references (the label, --ignore... lists): a column NAME, or else an integer INDEX, 0-based,
// negative counting from the end (-1 = last). A name that matches a header cell wins over the index reading.
// Duplicate header names are allowed, but a name used in a reference must be unique. A column takes at most
// one role: label, ignored, categorical or text.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/format.h"

namespace lepus {

struct CsvOptions {
  char delimiter = ',';                     // ',' for --format csv, '\t' for --format tsv
  bool quoted = true;                       // RFC 4180 quotes (csv); false: quotes are literal (tsv)
  bool header = true;                       // false: --no_header, columns are named by their 0-based position
  std::string label_column = "0";           // NAME or 0-based INDEX; a negative index counts from the end
  std::vector<std::string> ignore_columns;  // NAMEs or INDEXes
  std::vector<std::string> categorical;     // NAMEs or INDEXes: numeric-looking cells treated as strings
  std::vector<std::string> text_columns;    // NAMEs or INDEXes: free text split into words
  std::string csv_namespace = "c";
  std::string text_namespace;  // "" = each text column's name's first byte ('t' for an empty name)
  // VW 9's --csv conventions: a string cell is the feature NAME with the string VALUE, hashed as VW chains it
  // (hash(VALUE, seed = hash(NAME, namespace))) instead of "NAME=VALUE"; header cells "ns|name" are refused.
  bool vw_strings = false;
  std::string header_text;  // --csv_header: the column names, used instead of the file's first line
};

struct CsvSchema {
  enum class Role : uint8_t { kFeature, kCategorical, kText, kIgnore, kLabel };
  struct Column {
    std::string name;
    Role role = Role::kFeature;
    uint32_t name_hash = 0;        // hash of the column name in the CSV namespace (numeric features)
    unsigned char text_group = 0;  // text columns: the group byte of their namespace
    uint32_t text_hash = 0;        // text columns: their namespace hash
    std::string text_namespace;    // text columns: their namespace (feature names, --audit)
  };
  CsvOptions options;
  std::vector<Column> columns;
  size_t label = 0;
  unsigned char group = 'c';  // the CSV namespace's group byte
  uint32_t ns_hash = 0;       // the CSV namespace's hash
};

// Builds the schema from the first line of the file (the header, or with --no_header the first data row, of
// which only the cell count is used; a BOM and a trailing '\r' are removed). Header names are trimmed of
// spaces and TABs. The hashes use parse.hash_mode and parse.hash_seed, so rows must be parsed with the same.
// Throws ConfigError naming an unknown column or an index out of range (with the available names), an
// ambiguous name, a column given two roles, or an empty or malformed first line.
std::shared_ptr<const CsvSchema> make_csv_schema(std::string_view first_line, const CsvOptions& options,
                                                 const ParseOptions& parse);

// Splits one row into cells (quotes removed and "" unescaped in CSV; cells not trimmed). Returns false for a
// malformed CSV row (an unterminated quote, or anything but the delimiter or the end after a closing quote);
// cells then holds the cells read before the problem. Parsing does the same split without copies; this copy
// is for tests and tools.
bool split_csv_row(std::string_view line, char delimiter, bool quoted, std::vector<std::string>& cells);

// Where the records of RFC 4180 CSV end: a '\n' ends a record unless it is inside a quoted cell, one whose
// first byte is '"' (a '"' elsewhere in a cell is an ordinary byte, as split_csv_row reads it; "" inside
// quotes is one quote). The scan resumes where it stopped, so a reader can feed it a buffer that grows block
// by block.
struct CsvScan {
  size_t pos = 0;          // the next byte to look at
  size_t record_end = 0;   // just after the last record end ('\n') found so far; 0: none yet
  bool in_quotes = false;  // pos is inside a quoted cell
  bool cell_start = true;  // pos, outside quotes, begins a cell
};
// Advances `scan` over buf[scan.pos, n), n >= scan.pos. With first_only it stops after the first record end.
// Fast when the bytes hold no '"': then only the last '\n' is looked for.
void csv_scan(const char* buf, size_t n, char delimiter, CsvScan& scan, bool first_only = false);

// Parses one row against options.csv (which must be set). The line has no line end but those inside quoted
// cells; a trailing '\r' and a BOM are removed; an empty line gives ex.empty without a warning. ex.clear() is
// called first; ex.features receives the linear features (see "Groups" above), ex.groups their runs,
// ex.num_linear their count; no constant feature. Groups set in options.drop_group are skipped.
// Allocation-free once its thread's buffers have grown.
void parse_csv_line(std::string_view line, const ParseOptions& options, Example& ex, WarningSink& warnings);

}  // namespace lepus
