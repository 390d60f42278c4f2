// A growing SPD inverse, bordered one row at a time: see bordered_inverse.h.
#include "sketch/bordered_inverse.h"

#include <algorithm>

#include "lepus/errors.h"
#include "sketch/dense_io.h"

namespace lepus {

void BorderedInverse::border(const Eigen::VectorXd& v, double s) {
  const auto n = static_cast<Eigen::Index>(n_);
  if (m_.rows() <= n) {  // grow the capacity (doubling), keeping the block
    const Eigen::Index cap = std::max<Eigen::Index>(16, 2 * m_.rows());
    Eigen::MatrixXd bigger(cap, cap);
    bigger.topLeftCorner(n, n) = m_.topLeftCorner(n, n);
    m_.swap(bigger);
  }
  const double inv_s = 1.0 / s;
  if (n > 0) m_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>().rankUpdate(v.head(n), inv_s);
  m_.col(n).head(n) = -inv_s * v.head(n);
  m_(n, n) = inv_s;
  ++n_;
}

Eigen::MatrixXd BorderedInverse::dense() const {
  const auto n = static_cast<Eigen::Index>(n_);
  if (n == 0) return Eigen::MatrixXd();
  Eigen::MatrixXd d = m_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>();
  return d;
}

void BorderedInverse::save(ModelWriter& out) const {
  out.put_u64(n_);
  dense_io::put_upper(out, m_, n_);
}

void BorderedInverse::load(ModelReader& in, const std::string& who) {
  const uint64_t n = in.get_u64("inverse size");
  if (n > 0 && (n > (1u << 20) || n * (n + 1) / 2 > in.remaining() / sizeof(double)))
    throw ModelFormatError(in.source() + ": " + who + ": inverse larger than the file");
  Eigen::MatrixXd m(static_cast<Eigen::Index>(std::max<uint64_t>(n, 16)),
                    static_cast<Eigen::Index>(std::max<uint64_t>(n, 16)));
  const std::string what = who + " inverse";
  dense_io::get_upper(in, m, n, what.c_str());
  if (!m.topLeftCorner(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n)).allFinite())
    throw ModelFormatError(in.source() + ": " + who + ": a non-finite inverse");
  m_.swap(m);
  n_ = n;
}

}  // namespace lepus
