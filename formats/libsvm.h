// libsvm / svmlight reader: `label index:value index:value ... [# comment]`.
//
// Grammar notes: tokens are separated by runs of whitespace; the first is the label (read with VW's float
// reader, so `+1` is 1); each other token is `index:value`, where the index text is the feature NAME, hashed
// like a VW feature of the namespace options.libsvm_namespace (0- or 1-based indices need nothing special);
// a `qid:N` token is ignored; `#` starts a comment. The result is exactly what VW gives for the converted
// line `label |<namespace> index:value ...`, so a libsvm file and its VW conversion train the same model.
#pragma once
#include <string_view>

#include "formats/format.h"

namespace lepus {

// Parses one line (without its '\n') into ex, after ex.clear(). All features land in one group (the
// namespace's first byte) unless options.drop_group drops it; value-0 features are dropped as VW drops them.
// An empty, blank or comment-only line sets ex.empty. A token without ':' or with a bad value is skipped
// with a warning naming it; a bad label reads as 0 with VW's warning. In a non-scalar options.label_mode the
// label is read by read_class_field (format.h): a bad class warns and leaves the example unlabeled.
void parse_libsvm_line(std::string_view line, const ParseOptions& options, Example& ex,
                       WarningSink& warnings);

}  // namespace lepus
