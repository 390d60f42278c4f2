// A growing Nyström embedding: see nystrom.h.
#include "sketch/nystrom.h"

#include <algorithm>
#include <cmath>

#include "lepus/errors.h"
#include "sketch/dense_io.h"

namespace lepus {
namespace {

constexpr double kMinResidual = 1e-12;  // a landmark's part outside the span, squared, relative to K(z, z)

}  // namespace

NystromEmbedding::NystromEmbedding(const kernels::Kernel& kernel, const KorsOptions& kors, size_t budget)
    : kernel_(kernel), budget_(budget), kors_(std::make_unique<Kors>(kernel, kors)) {
  if (budget_ == 0) throw ConfigError("a Nyström embedding needs a budget of at least 1");
}

void NystromEmbedding::embed(kernels::PointRef x, Eigen::VectorXd& out) const {
  const auto m = static_cast<Eigen::Index>(landmarks_.size());
  out.resize(m);
  kernels::evaluate_all(kernel_, landmarks_, x, out.data());
  if (m > 0) l_.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(out);
}

bool NystromEmbedding::offer(kernels::PointRef x, Eigen::VectorXd& psi, double u) {
  if (landmarks_.size() >= budget_) return false;
  const double kxx = kernel_.self(x);
  const double residual = kxx - psi.squaredNorm();
  if (!(residual > kMinResidual * kxx) || !std::isfinite(residual))
    return false;  // in the span: adds nothing
  if (!kors_->step(x, 1.0, u).kept) return false;
  const auto m = static_cast<Eigen::Index>(landmarks_.size());
  if (l_.rows() <= m) {
    const Eigen::Index cap =
        std::min<Eigen::Index>(std::max<Eigen::Index>(16, 2 * l_.rows()), static_cast<Eigen::Index>(budget_));
    Eigen::MatrixXd bigger = Eigen::MatrixXd::Zero(cap, cap);
    bigger.topLeftCorner(m, m) = l_.topLeftCorner(m, m);
    l_.swap(bigger);
  }
  l_.row(m).head(m) = psi.transpose();
  l_(m, m) = std::sqrt(residual);
  landmarks_.add(x);
  psi.conservativeResize(m + 1);
  psi(m) = l_(m, m);  // ψ(z)'s new coordinate: (K(z, z) - ‖ψ(z)‖²) / L_mm
  return true;
}

void NystromEmbedding::save(ModelWriter& out) const {
  out.put_u64(budget_);
  landmarks_.save(out);
  const auto m = static_cast<Eigen::Index>(landmarks_.size());
  for (Eigen::Index i = 0; i < m; ++i)  // the lower triangle, row by row
    for (Eigen::Index j = 0; j <= i; ++j) out.put_f64(l_(i, j));
  kors_->save(out);
}

void NystromEmbedding::load(ModelReader& in, const std::string& who) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": " + who + " landmarks: " + what);
  };
  const uint64_t budget = in.get_u64("budget");
  if (budget != budget_) throw bad("saved with --budget " + std::to_string(budget));
  kernels::PointStore landmarks;
  landmarks.load(in, who + " landmarks");
  const auto m = static_cast<Eigen::Index>(landmarks.size());
  if (landmarks.size() > budget_ ||
      static_cast<uint64_t>(m) * static_cast<uint64_t>(m + 1) / 2 > in.remaining() / 8)
    throw bad("more landmarks than the budget or the file holds");
  Eigen::MatrixXd l = Eigen::MatrixXd::Zero(std::max<Eigen::Index>(m, 1), std::max<Eigen::Index>(m, 1));
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j <= i; ++j) l(i, j) = in.get_f64("landmark factor");
  for (Eigen::Index i = 0; i < m; ++i)
    if (!(l(i, i) > 0.0) || !l.row(i).head(i + 1).allFinite())
      throw bad("a factor that is not positive and finite");
  kors_->load(in, who);
  landmarks_ = std::move(landmarks);
  l_.swap(l);
}

}  // namespace lepus
