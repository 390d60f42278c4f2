#include "learners/common/matrix_option.h"

namespace lepus::common {
namespace {
constexpr uint32_t kDefaultRank = 10;
constexpr uint64_t kDefaultMaxDense = 1000;
}  // namespace

OptionSpec matrix_option(std::vector<std::string> choices) {
  OptionSpec s{
      "matrix",
      "",
      OptionSpec::Kind::kText,
      choices.front(),
      "the second-order matrix: auto (full until --max_dense_features features are seen, then "
      "sketch), full (exact, memory 8 n^2 bytes for n features seen, at most 4096), diag (one number "
      "per feature), sketch (a rank --rank Frequent Directions sketch, memory 16 m bytes per feature; wemm "
      "and "
      "laser: a rank --rank form of their state, exact while the inputs span at most --rank dimensions)",
      {},
      {}};
  s.choices = std::move(choices);
  return s;
}

OptionSpec rank_option() {
  return OptionSpec{"rank",
                    "",
                    OptionSpec::Kind::kNumber,
                    std::to_string(kDefaultRank),
                    "rank m of --matrix sketch (cost per example O(m nnz + m^2))",
                    {1.0, 1024.0, false, false}};
}

OptionSpec max_dense_option(uint64_t default_value) {
  return OptionSpec{
      "max_dense_features",
      "",
      OptionSpec::Kind::kNumber,
      std::to_string(default_value),
      "the most distinct features a full matrix holds (cost per example O(n^2), memory 8 or 16 n^2 "
      "bytes): beyond it --matrix auto goes on with a sketch, and a learner with no sketch stops "
      "with an error",
      {1.0, 4096.0, false, false}};
}

OptionSpec beyond_dense_option() {
  OptionSpec s{
      "beyond_dense",
      "",
      OptionSpec::Kind::kText,
      "sketch",
      "what --matrix auto goes on with once more than --max_dense_features features are seen: sketch "
      "(the strongest directions, --rank of them; O(rank nnz + rank^2) per example) or diag (the "
      "diagonal of the full matrix so far, one number per feature; O(nnz) per example)",
      {},
      {}};
  s.choices = {"sketch", "diag"};
  return s;
}

MatrixKind beyond_dense_of(const OptionValues& v) {
  return v.has("beyond_dense") && v.text("beyond_dense") == "diag" ? MatrixKind::kDiag : MatrixKind::kSketch;
}

uint64_t max_dense_of(const OptionValues& v) {
  if (!v.has("max_dense_features")) return kDefaultMaxDense;
  const double n = v.number("max_dense_features");
  if (n != static_cast<double>(static_cast<uint64_t>(n)))
    throw ConfigError("--max_dense_features must be a whole number");
  return static_cast<uint64_t>(n);
}

MatrixKind matrix_kind_of(const OptionValues& v, MatrixKind absent) {
  return v.has("matrix") ? matrix_kind_from(v.text("matrix")) : absent;
}

uint32_t rank_of(const OptionValues& v) {
  if (!v.has("rank")) return kDefaultRank;
  const double r = v.number("rank");
  if (r != static_cast<double>(static_cast<uint32_t>(r))) throw ConfigError("--rank must be a whole number");
  return static_cast<uint32_t>(r);
}

MatrixOptions matrix_options(MatrixKind kind, double lambda, int bits, uint32_t rank, uint64_t max_dense) {
  MatrixOptions o;
  o.kind = kind;
  o.lambda = lambda;
  o.bits = bits;
  o.sketch_rank = rank;
  o.max_dense = max_dense;
  return o;
}

}  // namespace lepus::common
