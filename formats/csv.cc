// CSV / TSV reader; the row semantics are in csv.h. The hot path (parse_csv_line) splits the row into
// string_views over the line and handles each cell as it is split, so a row is read once; only quoted cells
// holding "" are copied (unescaped) into a per-thread buffer, and all scratch space is per-thread and reused,
// so a steady stream of rows allocates nothing.
#include "formats/csv.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "formats/float_reader.h"
#include "lepus/errors.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lepus {
namespace {

using Role = CsvSchema::Role;

// Spaces and TABs only: other control bytes are data (and TAB is never inside a TSV cell anyway).
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

inline std::string_view trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && is_blank(s[b])) ++b;
  while (e > b && is_blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// The record readers strip the record's '\n'; a CRLF file leaves its '\r', and the first line may carry a
// UTF-8 BOM.
std::string_view strip_line(std::string_view line) {
  if (line.size() >= 3 && line[0] == '\xEF' && line[1] == '\xBB' && line[2] == '\xBF') line.remove_prefix(3);
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

enum class SplitStatus { kOk, kUnterminated, kAfterQuote };

// The first `delimiter` in [p, end), or end. Cells are a few bytes long, so a byte loop pays a mispredicted
// branch per cell and a memchr call its set-up per cell; one 16-byte compare usually covers the whole cell.
// SSE2 is part of x86-64 itself, so this needs no -march flag.
inline const char* find_delimiter(const char* p, const char* end, char delimiter) {
#if defined(__SSE2__)
  const __m128i d = _mm_set1_epi8(delimiter);
  while (end - p >= 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, d)));
    if (mask != 0) return p + std::countr_zero(mask);
    p += 16;
  }
#endif
  while (p < end && *p != delimiter) ++p;
  return p;
}

// Calls on_cell(cell) for every cell of the row, in order, and stops at the first malformed quoted cell
// (whose cell is then not reported). Views of quoted cells with "" point into `unescaped`, which is reserved
// to the line's length on first use: unescaped text is never longer than the line, so the buffer never
// moves while the row is split and every view stays valid until the next call. on_cell has one call site so
// that it is inlined.
template <typename OnCell>
SplitStatus split_cells(std::string_view line, char delimiter, bool quoted, std::string& unescaped,
                        OnCell&& on_cell) {
  const char* p = line.data();
  const char* const end = p + line.size();
  bool buffer_ready = false;
  while (true) {
    std::string_view cell;
    if (quoted && p < end && *p == '"') {
      const char* const start = ++p;
      const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
      if (q == nullptr) return SplitStatus::kUnterminated;
      if (q + 1 < end && q[1] == '"') {
        if (!buffer_ready) {
          unescaped.clear();
          unescaped.reserve(line.size());
          buffer_ready = true;
        }
        const size_t cell_begin = unescaped.size();
        const char* segment = start;
        while (true) {
          q = static_cast<const char*>(std::memchr(segment, '"', static_cast<size_t>(end - segment)));
          if (q == nullptr) return SplitStatus::kUnterminated;
          if (q + 1 < end && q[1] == '"') {
            unescaped.append(segment, static_cast<size_t>(q + 1 - segment));  // keeps one of the two
            segment = q + 2;
            continue;
          }
          unescaped.append(segment, static_cast<size_t>(q - segment));
          break;
        }
        cell = std::string_view(unescaped.data() + cell_begin, unescaped.size() - cell_begin);
      } else {
        cell = std::string_view(start, static_cast<size_t>(q - start));
      }
      p = q + 1;
      if (p < end && *p != delimiter) return SplitStatus::kAfterQuote;
    } else {
      const char* const start = p;
      p = find_delimiter(p, end, delimiter);
      cell = std::string_view(start, static_cast<size_t>(p - start));
    }
    on_cell(cell);
    if (p == end) return SplitStatus::kOk;
    ++p;  // the delimiter; a row ending with one has a last, empty cell
  }
}

// A cell is a number only if it starts like one: VW's reader takes "E", "-" or "." for 0, which would
// silently drop a grade "E" or a missing-value mark "-" instead of keeping them as categories.
inline bool starts_like_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') ++i;
  return i < s.size() && static_cast<unsigned char>(s[i] - '0') < 10;
}

// Sets *value and returns true when the (trimmed, non-empty) cell is numeric in the sense of csv.h. A cell
// that reads as a number beyond float range is not: ids such as 7e091613 (hex in a click log) are categories.
inline bool read_numeric(std::string_view cell, float* value) {
  if (!starts_like_number(cell)) return false;
  const char* const end = cell.data() + cell.size();
  const char* stop = nullptr;
  const float v = read_vw_float(cell.data(), end, &stop);
  if (stop != end || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

// Word bytes of text columns: ASCII letters and digits, and every byte >= 0x80 (so UTF-8 letters stay whole).
constexpr std::array<bool, 256> make_word_bytes() {
  std::array<bool, 256> w{};
  for (int c = 0; c < 256; ++c) {
    w[static_cast<size_t>(c)] =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
  }
  return w;
}
constexpr std::array<bool, 256> kWordByte = make_word_bytes();

struct TextCell {
  uint32_t column;
  std::string_view text;
};

// Per-thread scratch space of parse_csv_line (the parse stage runs on several threads).
struct Scratch {
  std::string unescaped;  // quoted cells holding ""
  std::string joined;     // "NAME=VALUE"
  std::string lowered;    // a text word with upper-case letters
  std::vector<TextCell> text_cells;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// `cell 3 ('city')`, or just `cell 12` beyond the header's columns.
std::string describe_cell(const CsvSchema& schema, size_t cell) {
  std::string out = "cell " + std::to_string(cell);
  if (cell < schema.columns.size()) out += " ('" + schema.columns[cell].name + "')";
  return out;
}

void set_malformed(Example& ex) {
  ex.features.clear();
  ex.groups.clear();
  ex.num_linear = 0;
  ex.label = 0.0f;
  ex.labeled = false;
  ex.empty = true;
}

// Appends the word features of one text cell.
// names (names kept only): each word's name in the namespace ns.
void add_words(std::string_view text, uint32_t ns_hash, HashMode mode, Scratch& s, FeatureVector& features,
               std::vector<FeatureName>* names, const std::string& ns) {
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    while (p < end && !kWordByte[static_cast<unsigned char>(*p)]) ++p;
    if (p == end) break;
    const char* const start = p;
    bool upper = false;
    while (p < end && kWordByte[static_cast<unsigned char>(*p)]) {
      upper |= static_cast<unsigned char>(*p - 'A') < 26;
      ++p;
    }
    std::string_view word(start, static_cast<size_t>(p - start));
    if (upper) {
      s.lowered.assign(word);
      for (char& c : s.lowered) {
        if (static_cast<unsigned char>(c - 'A') < 26) c = static_cast<char>(c + ('a' - 'A'));
      }
      word = s.lowered;
    }
    features.push_back(Feature{hash_feature(word, ns_hash, mode), 1.0f});
    if (names) names->push_back({NamePart{ns, std::string(word), {}}});
  }
}

// Extends the last group when it has the same byte (text features joining the CSV namespace's group),
// otherwise opens a new one; an empty run adds nothing.
void close_group(Example& ex, unsigned char group, uint32_t begin) {
  const auto end = static_cast<uint32_t>(ex.features.size());
  if (end == begin) return;
  if (!ex.groups.empty() && ex.groups.back().ns == group) {
    ex.groups.back().end = end;
  } else {
    ex.groups.push_back(FeatureGroup{group, begin, end});
  }
}

// ---- schema ----

const char* role_word(Role role) {
  switch (role) {
    case Role::kLabel: return "the label";
    case Role::kIgnore: return "ignored";
    case Role::kCategorical: return "categorical";
    case Role::kText: return "text";
    case Role::kFeature: break;
  }
  return "a feature";
}

// "a, b, c" for error messages, cut after a few names so a 5,000-column table gives a readable line.
std::string list_names(const std::vector<std::string>& names) {
  constexpr size_t kMaxListed = 20;
  std::string out;
  const size_t n = std::min(names.size(), kMaxListed);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    out += '\'';
    out += names[i];
    out += '\'';
  }
  if (names.size() > n) out += ", ... (" + std::to_string(names.size()) + " columns in all)";
  return out;
}

size_t resolve_column(const std::string& ref, const std::vector<std::string>& names, Role role) {
  const auto first = std::find(names.begin(), names.end(), ref);
  if (first != names.end()) {
    const auto again = std::find(first + 1, names.end(), ref);
    if (again != names.end()) {
      throw ConfigError("CSV column '" + ref + "' (" + role_word(role) + ") is ambiguous: columns " +
                        std::to_string(first - names.begin()) + " and " +
                        std::to_string(again - names.begin()) +
                        " have that name; refer to the column by its index");
    }
    return static_cast<size_t>(first - names.begin());
  }
  long long index = 0;
  const char* const end = ref.data() + ref.size();
  const auto [stop, error] = std::from_chars(ref.data(), end, index);
  const auto n = static_cast<long long>(names.size());
  if (ref.empty() || error != std::errc() || stop != end) {
    // Header cells that all read as numbers are most likely the first data row: say how the row was read.
    const bool numeric = !names.empty() && std::all_of(names.begin(), names.end(), [](const std::string& s) {
      double v = 0.0;
      const auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), v);
      return !s.empty() && e == std::errc() && p == s.data() + s.size();
    });
    throw ConfigError(
        "unknown CSV column '" + ref + "' (" + role_word(role) + "); the columns are " + list_names(names) +
        (numeric ? ". The first row was read as the header, but its cells are numbers: if the file "
                   "has no header row, add --csv_no_file_header (with --csv) or --no_header (with "
                   "--format csv)"
                 : ""));
  }
  if (index < -n || index >= n) {
    throw ConfigError("CSV column index " + ref + " (" + role_word(role) +
                      ") is out of range: the table has " + std::to_string(n) + " columns (0.." +
                      std::to_string(n - 1) + ", or -" + std::to_string(n) +
                      "..-1 from the end): " + list_names(names));
  }
  return static_cast<size_t>(index < 0 ? index + n : index);
}

void assign_role(CsvSchema& schema, size_t column, Role role) {
  CsvSchema::Column& c = schema.columns[column];
  if (c.role == role) return;  // the same column listed twice
  if (c.role != Role::kFeature) {
    const bool label = c.role == Role::kLabel;
    throw ConfigError("CSV column '" + c.name + "' (" + std::to_string(column) + ") cannot be both " +
                      role_word(label ? c.role : role) + (label ? " column" : "") + " and " +
                      role_word(label ? role : c.role));
  }
  c.role = role;
}

}  // namespace

void csv_scan(const char* buf, size_t n, char delimiter, CsvScan& scan, bool first_only) {
  size_t pos = scan.pos;
  if (!scan.in_quotes && std::memchr(buf + pos, '"', n - pos) == nullptr) {  // unquoted text: its last '\n'
    const void* end = n == pos     ? nullptr
                      : first_only ? std::memchr(buf + pos, '\n', n - pos)
                                   : memrchr(buf + pos, '\n', n - pos);
    if (end != nullptr) {
      scan.record_end = static_cast<size_t>(static_cast<const char*>(end) - buf) + 1;
      if (first_only) {
        scan.pos = scan.record_end;
        scan.cell_start = true;
        return;
      }
    }
    if (n > pos) scan.cell_start = buf[n - 1] == delimiter || buf[n - 1] == '\n';
    scan.pos = n;
    return;
  }
  while (pos < n) {
    if (scan.in_quotes) {
      const auto* q = static_cast<const char*>(std::memchr(buf + pos, '"', n - pos));
      if (q == nullptr) {
        pos = n;
        break;
      }
      const auto at = static_cast<size_t>(q - buf);
      if (at + 1 == n) {  // "" or the closing quote: the next byte decides, so stop before it
        pos = at;
        break;
      }
      if (q[1] == '"') {
        pos = at + 2;
        continue;
      }
      pos = at + 1;
      scan.in_quotes = false;
      scan.cell_start = false;
      continue;
    }
    const auto* nl = static_cast<const char*>(std::memchr(buf + pos, '\n', n - pos));
    const char* stop = nl != nullptr ? nl : buf + n;
    const auto* q =
        static_cast<const char*>(std::memchr(buf + pos, '"', static_cast<size_t>(stop - (buf + pos))));
    if (q == nullptr) {  // no quote before the line end: the record ends there
      if (nl == nullptr) {
        scan.cell_start = buf[n - 1] == delimiter;
        pos = n;
        break;
      }
      pos = static_cast<size_t>(nl - buf) + 1;
      scan.record_end = pos;
      scan.cell_start = true;
      if (first_only) break;
      continue;
    }
    const auto at = static_cast<size_t>(q - buf);
    scan.in_quotes = at == pos ? scan.cell_start : q[-1] == delimiter;  // a quote opens only a cell
    scan.cell_start = false;
    pos = at + 1;
  }
  scan.pos = pos;
}

bool split_csv_row(std::string_view line, char delimiter, bool quoted, std::vector<std::string>& cells) {
  cells.clear();
  std::string unescaped;
  const SplitStatus status = split_cells(line, delimiter, quoted, unescaped,
                                         [&cells](std::string_view cell) { cells.emplace_back(cell); });
  return status == SplitStatus::kOk;
}

std::shared_ptr<const CsvSchema> make_csv_schema(std::string_view first_line, const CsvOptions& options,
                                                 const ParseOptions& parse) {
  first_line = strip_line(first_line);
  const char* what = options.header ? "header" : "first row";
  if (first_line.empty()) throw ConfigError(std::string("the CSV ") + what + " is empty: no columns");
  std::vector<std::string> cells;
  if (!split_csv_row(first_line, options.delimiter, options.quoted, cells)) {
    throw ConfigError(std::string("the CSV ") + what +
                      " is malformed (an unterminated quote, or text after " + "a closing quote, in cell " +
                      std::to_string(cells.size()) + ")");
  }

  auto schema = std::make_shared<CsvSchema>();
  schema->options = options;
  std::vector<std::string> names(cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    names[i] =
        options.header || !options.header_text.empty() ? std::string(trim(cells[i])) : std::to_string(i);
  }
  schema->columns.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) schema->columns[i].name = names[i];
  schema->label = resolve_column(options.label_column, names, Role::kLabel);
  schema->columns[schema->label].role = Role::kLabel;
  for (const std::string& ref : options.ignore_columns) {
    assign_role(*schema, resolve_column(ref, names, Role::kIgnore), Role::kIgnore);
  }
  for (const std::string& ref : options.categorical) {
    assign_role(*schema, resolve_column(ref, names, Role::kCategorical), Role::kCategorical);
  }
  for (const std::string& ref : options.text_columns) {
    assign_role(*schema, resolve_column(ref, names, Role::kText), Role::kText);
  }

  if (options.vw_strings) {
    for (const CsvSchema::Column& c : schema->columns) {
      if (c.role == Role::kIgnore) continue;
      if (c.name.find('|') != std::string::npos)
        throw ConfigError("CSV column '" + c.name +
                          "': VW's namespace|name header cells are not supported; lepus "
                          "puts every column in one namespace (--csv_namespace)");
      if (c.name == "_tag")
        throw ConfigError("CSV column '_tag': VW's tag column is not supported; list it in --ignore_columns");
    }
  }

  const std::string_view ns = options.csv_namespace;
  if (ns.empty()) {
    // VW's default namespace, as `| a:1` (hash 0, or murmur3 of "" under a seed, whatever --hash says).
    schema->group = kDefaultNamespace;
    schema->ns_hash = parse.hash_seed == 0 ? 0u : murmur3_32(std::string_view(), parse.hash_seed);
  } else {
    schema->group = static_cast<unsigned char>(ns[0]);
    schema->ns_hash = hash_feature(ns, parse.hash_seed, parse.hash_mode);
  }
  for (CsvSchema::Column& c : schema->columns) {
    c.name_hash = hash_feature(c.name, schema->ns_hash, parse.hash_mode);
    if (c.role != Role::kText) continue;
    // --text_namespace, else the column name's first byte; an empty name has none, so 't' (for text).
    std::string_view text_ns = options.text_namespace;
    if (text_ns.empty()) {
      text_ns = c.name.empty() ? std::string_view("t") : std::string_view(c.name).substr(0, 1);
    }
    c.text_group = static_cast<unsigned char>(text_ns[0]);
    c.text_namespace = std::string(text_ns);
    c.text_hash = hash_feature(text_ns, parse.hash_seed, parse.hash_mode);
  }
  return schema;
}

void parse_csv_line(std::string_view line, const ParseOptions& options, Example& ex, WarningSink& warnings) {
  ex.clear();
  line = strip_line(line);
  if (line.empty()) {
    ex.empty = true;
    return;
  }
  const CsvSchema& schema = *options.csv;
  const HashMode mode = options.hash_mode;
  const size_t num_columns = schema.columns.size();
  const bool drop_csv = options.drop_group[schema.group];
  Scratch& s = scratch();
  s.text_cells.clear();
  FeatureVector& features = ex.features;
  std::vector<FeatureName>* const names = options.keep_names ? &ex.names : nullptr;

  std::string_view label_cell;
  size_t column = 0;
  const SplitStatus status = split_cells(
      line, schema.options.delimiter, schema.options.quoted, s.unescaped, [&](std::string_view cell) {
        const size_t c = column++;
        if (c >= num_columns) return;  // counted for the warning only
        const CsvSchema::Column& col = schema.columns[c];
        switch (col.role) {
          case Role::kFeature:
          case Role::kCategorical: {
            if (drop_csv) return;
            const std::string_view trimmed = trim(cell);
            if (trimmed.empty()) return;
            float value = 0.0f;
            if (col.role == Role::kFeature && read_numeric(trimmed, &value)) {
              if (value != 0.0f) {
                features.push_back(Feature{col.name_hash, value});
                if (names) names->push_back({NamePart{schema.options.csv_namespace, col.name, {}}});
              }
              return;
            }
            if (schema.options.vw_strings) {
              features.push_back(Feature{hash_feature(cell, col.name_hash, mode), 1.0f});
              if (names)
                names->push_back({NamePart{schema.options.csv_namespace, col.name, std::string(cell)}});
              return;
            }
            s.joined.assign(col.name);
            s.joined += '=';
            s.joined.append(cell);
            features.push_back(Feature{hash_feature(s.joined, schema.ns_hash, mode), 1.0f});
            if (names) names->push_back({NamePart{schema.options.csv_namespace, s.joined, {}}});
            return;
          }
          case Role::kText:
            if (!options.drop_group[col.text_group])
              s.text_cells.push_back(TextCell{static_cast<uint32_t>(c), cell});
            return;
          case Role::kLabel: label_cell = cell; return;
          case Role::kIgnore: return;
        }
      });

  if (status != SplitStatus::kOk) {
    warnings.warn(
        (status == SplitStatus::kUnterminated ? "unterminated quote in "
                                              : "text after the closing quote of ") +
        describe_cell(schema, column) +
        (status == SplitStatus::kUnterminated ? " (the quoted cell runs to the end of the input)" : ""));
    set_malformed(ex);
    return;
  }
  if (column != num_columns) {
    warnings.warn("row has " + std::to_string(column) + " cells, the " +
                  (schema.options.header ? "header" : "first row") + " has " + std::to_string(num_columns));
    set_malformed(ex);
    return;
  }
  const std::string_view label_text = trim(label_cell);
  if (label_text.empty()) {
    warnings.warn("empty label cell (column " + std::to_string(schema.label) + " '" +
                  schema.columns[schema.label].name + "')");
    set_malformed(ex);
    return;
  }
  if (options.label_mode != LabelMode::kScalar) {
    read_class_field(label_text, options, ex, warnings);
  } else {
    // --positive_label compares text, so "M"/"B" or "spam"/"ham" never reach the float reader.
    ex.label = options.has_positive_label ? (label_text == options.positive_label ? 1.0f : -1.0f)
                                          : read_label_token(label_text, warnings);
    ex.labeled = true;
  }

  close_group(ex, schema.group, 0);
  if (!s.text_cells.empty()) {
    // Text namespaces sharing the CSV namespace's byte join its group, then each other group in order of
    // first appearance, all its columns together (a table rarely has more than a few text columns).
    const auto& cells = s.text_cells;
    auto emit_group = [&](unsigned char group, size_t from) {
      const auto begin = static_cast<uint32_t>(features.size());
      for (size_t j = from; j < cells.size(); ++j) {
        const CsvSchema::Column& col = schema.columns[cells[j].column];
        if (col.text_group == group)
          add_words(cells[j].text, col.text_hash, mode, s, features, names, col.text_namespace);
      }
      close_group(ex, group, begin);
    };
    emit_group(schema.group, 0);
    for (size_t i = 0; i < cells.size(); ++i) {
      const unsigned char group = schema.columns[cells[i].column].text_group;
      if (group == schema.group) continue;
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = schema.columns[cells[j].column].text_group == group;
      if (!seen) emit_group(group, i);
    }
  }
  ex.num_linear = static_cast<uint32_t>(features.size());
}

}  // namespace lepus
