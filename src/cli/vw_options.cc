// lepus's answers to VW 9.11.2's options it does not declare. The table itself (vw_options_table.inc) is made
// from VW's option definitions by utl/vw_options_table; answers here are lepus's own words.
#include "cli/vw_options.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace lepus::cli {
namespace {

const VwOption kTable[] = {
#include "cli/vw_options_table.inc"
};

// Options with an answer of their own; every other one gets its group's.
struct Specific {
  const char* name;
  bool accepted;
  const char* text;  // follows "--NAME "
};
const Specific kSpecific[] = {
    // Tuning knobs of VW's parser with no lepus counterpart: accepted, with a note, so VW scripts run.
    {"ring_size", true, "has no effect in lepus (its pipeline sizes its own buffers); ignored"},
    {"example_queue_limit", true, "has no effect in lepus (its pipeline sizes its own queues); ignored"},
    // VW's optimizers that lepus does not reproduce (--ftrl, --pistol and --coin are the vw-* learners).
    {"freegrad", false, "(VW's FreeGrad optimizer) is not in lepus"},
    {"bfgs", false, "(VW's batch L-BFGS optimizer) is not in lepus: lepus learns online only"},
    {"conjugate_gradient", false,
     "(VW's batch conjugate-gradient optimizer) is not in lepus: lepus learns online only"},
    // Inputs and outputs lepus reads or writes differently.
    {"json", false, "(VW's JSON input) is not in lepus: lepus reads VW text, libsvm and CSV/TSV (--format)"},
    {"dsjson", false,
     "(VW's decision-service JSON input) is not in lepus: lepus reads VW text, libsvm and CSV/TSV "
     "(--format)"},
    {"csv_ns_value", false, "(VW's per-namespace scaling of CSV values) is not in lepus's CSV reader"},
    {"hexfloat_weights", false, "is not in lepus: --readable_model prints decimal weights"},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "[Reduction] One Against All Options" -> "VW's one against all reduction"; "[Search] Argmax Options" -> "VW's
// search argmax options"; "Feature Options" -> "VW's feature options".
std::string group_phrase(const char* group) {
  const std::string g = group;
  std::string first = g.substr(0, g.find(';'));  // an option in several groups: its first
  static const std::string kOptions = " Options";
  if (first.size() > kOptions.size() &&
      first.compare(first.size() - kOptions.size(), kOptions.size(), kOptions) == 0)
    first.resize(first.size() - kOptions.size());
  static const std::string kReduction = "[Reduction] ", kSearch = "[Search] ";
  if (first.rfind(kReduction, 0) == 0) {
    const std::string name = lower(first.substr(kReduction.size()));
    const bool named = name.size() >= 10 && name.compare(name.size() - 10, 10, " reduction") == 0;
    return "an option of VW's " + name + (named ? "" : " reduction");
  }
  if (first.rfind(kSearch, 0) == 0) {
    const std::string name = lower(first.substr(kSearch.size()));
    return "one of VW's " + (name.rfind("search ", 0) == 0 ? name : "search " + name) + " options";
  }
  return "one of VW's " + lower(first) + " options";
}

}  // namespace

const std::vector<VwOption>& vw_options() {
  static const std::vector<VwOption> all(std::begin(kTable), std::end(kTable));
  return all;
}

const VwOption* find_vw_option(const std::string& long_name) {
  for (const auto& o : vw_options())
    if (long_name == o.name) return &o;
  return nullptr;
}

const VwOption* find_vw_short_option(const std::string& letter) {
  if (letter.empty()) return nullptr;
  for (const auto& o : vw_options())
    if (letter == o.short_name) return &o;
  return nullptr;
}

VwAnswer vw_option_answer(const VwOption& o) {
  const std::string shown = std::string("--") + o.name;
  for (const auto& s : kSpecific)
    if (std::strcmp(s.name, o.name) == 0) return VwAnswer{s.accepted, shown + " " + s.text};
  return VwAnswer{false, shown + " is " + group_phrase(o.group) + ", which lepus does not implement"};
}

}  // namespace lepus::cli
