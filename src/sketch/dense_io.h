// How the dense, full-matrix state goes into model files, written once for the full matrix component and the
// dense learners (scinol-full, ftprl-full): the compact slot index as its slots in position order, and
// symmetric matrices as their upper triangles, column by column.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "lepus/errors.h"
#include "lepus/model_io.h"
#include "sketch/compact_index.h"

namespace lepus::dense_io {

inline void put_index(ModelWriter& out, const CompactIndex& index) {
  out.put_values(index.slots().data(), index.size());
}

// n slots; ModelFormatError naming `who` for a slot listed twice.
inline CompactIndex get_index(ModelReader& in, uint64_t n, const std::string& who) {
  CompactIndex index;
  const std::string what = who + " slot";
  for (uint64_t i = 0; i < n; ++i)
    if (index.insert(in.get_u64(what.c_str())) != i)
      throw ModelFormatError(in.source() + ": " + who + " state: a slot listed twice");
  return index;
}

// The upper triangle of m's top-left n x n block.
inline void put_upper(ModelWriter& out, const Eigen::MatrixXd& m, uint64_t n) {
  for (uint64_t j = 0; j < n; ++j) out.put_values(m.col(static_cast<Eigen::Index>(j)).data(), j + 1);
}

// Reads what put_upper wrote into m's top-left n x n block (m has at least n rows and columns) and mirrors it.
inline void get_upper(ModelReader& in, Eigen::MatrixXd& m, uint64_t n, const char* what) {
  for (uint64_t j = 0; j < n; ++j) {
    const auto c = static_cast<Eigen::Index>(j);
    in.get_raw(m.col(c).data(), (j + 1) * sizeof(double), what);
    for (Eigen::Index i = 0; i < c; ++i) m(c, i) = m(i, c);
  }
}

}  // namespace lepus::dense_io
