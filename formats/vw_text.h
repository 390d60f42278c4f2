// VW text format reader: one line to one Example, exactly as VW 9.11.2 reads it.
//
// Grammar notes (the parts a casual reader of VW data would not guess):
//   line          := [BOM] label_section ['|' feature_section]      one trailing '\r' is dropped
//   label_section := everything before the first '|'; if it holds a TAB, only the text after the first TAB.
//                    Split on single spaces. The last token is the tag if it starts with '\'' (removed) or if
//                    it touches the end of the section (`1 tg|f a`: tag tg; `1|f a`: tag 1, no label).
//                    The rest: [label [weight [initial]]]; 4+ tokens is an error and leaves it unlabeled.
//                    --oaa (LabelMode::kMulticlass): [class [weight]], class a non-negative integer or a
//                    --named_labels name; 3+ tokens or a bad or unknown class warn and leave it unlabeled.
//                    --csoaa (kCostSensitive): {class[':'cost]}, a class alone having the unknown cost
//                    FLT_MAX; labeled when some cost is known; a bad token warns and leaves it unlabeled,
//                    with no classes.
//   namespace     := '|' [name[':' weight]] {(' '|'\t') [feature]}   name ends at space TAB ':' '|' '\r'
//   feature       := name [':' value]        value read by read_vw_float; not a number -> string value
//                  | ':' value                anonymous: index nshash + k, k counting in this '|' block
// Group of a namespace = its first byte; the default namespace ('|' followed by space/end) is ' '. Features
// of value 0 (after the namespace weight) are dropped. Anything unexpected after a value warns and drops the
// rest of the line; a '\r' inside the features silently ends the line.
#pragma once
#include <string_view>

#include "formats/format.h"

namespace lepus {

// Parses one line (without its '\n') into ex. ex.clear() is called first; ex.features receives the linear
// features grouped by feature group (groups in order of first appearance, file order inside a group),
// ex.groups one entry per non-empty group, ex.num_linear their count. The constant feature and interactions
// are not added here. Groups whose byte is set in options.drop_group are skipped. An empty line (after the
// BOM and '\r') sets ex.empty and nothing else; any other line gets the label_kind of options.label_mode,
// labeled or not. Recoverable problems go to warnings, VW's wording.
void parse_vw_line(std::string_view line, const ParseOptions& options, Example& ex, WarningSink& warnings);

// parse_vw_line without its whole-token fast paths: every feature through the general grammar, byte by byte. The
// two give identical examples and warnings on every line; this one is the reference the tests and the fuzz
// target hold the fast paths to.
void parse_vw_line_general(std::string_view line, const ParseOptions& options, Example& ex,
                           WarningSink& warnings);

}  // namespace lepus
