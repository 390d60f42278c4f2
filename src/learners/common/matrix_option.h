// --matrix and --rank, declared once for every learner with a matrix (src/sketch): the rows list the modes
// their paper defines, and the learner builds its component from the parsed values.
#pragma once
#include <string>
#include <vector>

#include "lepus/errors.h"
#include "lepus/options.h"
#include "sketch/matrix.h"

namespace lepus::common {

// --matrix with these choices, the first the default.
OptionSpec matrix_option(std::vector<std::string> choices);
// --rank: the sketch's rank m.
OptionSpec rank_option();
// --max_dense_features: the most features a full matrix holds, with this row's default.
OptionSpec max_dense_option(uint64_t default_value = 1000);

// --beyond_dense: what --matrix auto goes on with past --max_dense_features (sketch or diag).
OptionSpec beyond_dense_option();
MatrixKind beyond_dense_of(const OptionValues& v);  // kSketch or kDiag

// --matrix, or `absent` (auto by default) when not given.
MatrixKind matrix_kind_of(const OptionValues& v, MatrixKind absent = MatrixKind::kAuto);
uint32_t rank_of(const OptionValues& v);       // --rank (its default when absent)
uint64_t max_dense_of(const OptionValues& v);  // --max_dense_features (its default when absent)

// The component's options: prior lambda I over 2^bits slots, sketch rank m, the components' default caps.
MatrixOptions matrix_options(MatrixKind kind, double lambda, int bits, uint32_t rank, uint64_t max_dense);

}  // namespace lepus::common
