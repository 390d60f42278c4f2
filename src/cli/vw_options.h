// VW 9.11.2's command-line options (names and kinds, as facts read from VW's option definitions), and lepus's
// one-line answer for each one lepus does not declare itself. Every VW option lepus implements is declared by
// the ordinary option table under VW's name, so it never reaches this table's answers.
#pragma once
#include <string>
#include <vector>

namespace lepus::cli {

struct VwOption {
  const char* name;        // long name without dashes
  const char* short_name;  // one letter, or "" for none
  bool takes_value;        // false: a switch
  const char* group;       // VW's option group(s), ';'-separated: "[Reduction] One Against All Options"
};

// Every VW 9.11.2 option, by name.
const std::vector<VwOption>& vw_options();
const VwOption* find_vw_option(const std::string& long_name);
const VwOption* find_vw_short_option(const std::string& letter);

struct VwAnswer {
  bool accepted = false;  // true: a tuning knob with no effect in lepus, accepted with this note
  std::string text;       // one line, starting with the option as written ("--oaa ...")
};
VwAnswer vw_option_answer(const VwOption& option);

}  // namespace lepus::cli
