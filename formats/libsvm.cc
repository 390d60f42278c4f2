// libsvm / svmlight reader; see libsvm.h.
#include "formats/libsvm.h"

#include <cmath>
#include <cstring>
#include <string>

#include "formats/float_reader.h"

namespace lepus {
namespace {

// Python's str.split() separators minus the line breaks the caller already removed: the VW oracles were
// converted with split(), so any of these between tokens must behave like one space.
inline bool is_separator(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

void warn_token(WarningSink& warnings, const char* text, std::string_view token) {
  std::string message = "libsvm: ";
  message += text;
  message += " '";
  message.append(token);
  message += "', skipped";
  warnings.warn(message);
}

}  // namespace

void parse_libsvm_line(std::string_view line, const ParseOptions& options, Example& ex,
                       WarningSink& warnings) {
  ex.clear();
  if (line.size() >= 3 && line[0] == '\xEF' && line[1] == '\xBB' && line[2] == '\xBF') line.remove_prefix(3);
  if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  const char* p = line.data();
  const char* const end = p + line.size();
  while (p < end && (is_separator(*p) || *p == '\n')) ++p;
  if (p == end) {
    ex.empty = true;
    return;
  }

  // The label: VW's float_of_string rules (a bad or NaN label reads as 0 with a warning).
  const char* token = p;
  while (p < end && !is_separator(*p)) ++p;
  const std::string_view label_text(token, static_cast<size_t>(p - token));
  const char* stop = nullptr;
  if (options.label_mode != LabelMode::kScalar) {
    read_class_field(label_text, options, ex, warnings);
  } else if (options.has_positive_label) {  // --positive_label: compared as text
    ex.label = label_text == options.positive_label ? 1.0f : -1.0f;
    ex.labeled = true;
  } else {
    ex.label = read_label_token(label_text, warnings);
    ex.labeled = true;
  }

  // The namespace, hashed as VW hashes `|name` (an empty name behaves like VW's default namespace `| `).
  const std::string_view ns = options.libsvm_namespace;
  const unsigned char group =
      ns.empty() ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(ns[0]);
  const bool drop = options.drop_group[group];
  uint32_t nshash = 0;
  if (ns.empty()) {
    nshash = options.hash_seed == 0 ? 0u : murmur3_32(std::string_view(), options.hash_seed);
  } else {
    nshash = hash_feature(ns, options.hash_seed, options.hash_mode);
  }

  while (true) {
    while (p < end && is_separator(*p)) ++p;
    if (p == end) break;
    token = p;
    const char* colon = nullptr;
    while (p < end && !is_separator(*p)) {
      if (*p == ':' && colon == nullptr) colon = p;
      ++p;
    }
    const std::string_view text(token, static_cast<size_t>(p - token));
    if (colon == nullptr || colon == token) {
      warn_token(warnings, "expected index:value, got", text);
      continue;
    }
    const std::string_view name(token, static_cast<size_t>(colon - token));
    if (name == "qid") continue;
    float value = read_vw_float(colon + 1, p, &stop);
    if (stop == colon + 1 || stop != p || !std::isfinite(value)) {
      warn_token(warnings, "bad feature value in", text);
      continue;
    }
    if (value == 0.0f || drop) continue;
    ex.features.push_back(Feature{hash_feature(name, nshash, options.hash_mode), value});
    if (options.keep_names) ex.names.push_back({NamePart{std::string(ns), std::string(name), {}}});
  }
  if (!ex.features.empty()) {
    ex.groups.push_back(FeatureGroup{group, 0, static_cast<uint32_t>(ex.features.size())});
  }
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
}

}  // namespace lepus
