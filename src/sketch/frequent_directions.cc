#include "sketch/frequent_directions.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lepus/errors.h"

namespace lepus {
namespace {
constexpr double kRounding = 1e-12;  // relative size of an eigenvalue that is the eigensolver's rounding
}  // namespace

FrequentDirections::FrequentDirections(uint32_t rank, uint64_t cap) : rank_(rank), cap_(cap) {
  if (rank < 1 || rank > kMaxRank)
    throw ConfigError("sketch: the rank must be between 1 and " + std::to_string(kMaxRank) + ", got " +
                      std::to_string(rank));
  if (cap < 1 || cap > kMaxCap)
    throw ConfigError("sketch: the cap on distinct features must be between 1 and " +
                      std::to_string(kMaxCap) + ", got " + std::to_string(cap));
  gram_.setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
  w_.setZero(2 * Eigen::Index{rank}, 4 * Eigen::Index{rank});
}

uint32_t FrequentDirections::raw_limit() const {
  const double balance = std::sqrt(static_cast<double>(rank_) * static_cast<double>(columns()) / 5.0);
  return static_cast<uint32_t>(std::clamp(balance, 2.0 * rank_, 65536.0));
}

void FrequentDirections::gather(std::span<const Coord> x) const {
  if (gathered_version_ == version_ && gathered_.size() == x.size() &&
      std::equal(x.begin(), x.end(), gathered_.begin(),
                 [](const Coord& a, const Coord& b) { return a.slot == b.slot && a.x == b.x; }))
    return;
  const Eigen::Index m = rank_;
  // The positions first, then the columns: the table look-ups do not wait on the sums.
  positions_.resize(x.size());
  for (const Coord& c : x) index_.prefetch(c.slot);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t pos = index_.find(x[i].slot);
    positions_[i] = pos;
    if (pos != CompactIndex::kNone) {  // the columns are scattered over memory: ask for them all at once
      __builtin_prefetch(base_.data() + size_t{pos} * rank_);
      __builtin_prefetch(raw_.data() + pos);
    }
  }
  for (size_t i = 0; i < x.size(); ++i)
    if (positions_[i] != CompactIndex::kNone) __builtin_prefetch(raw_[positions_[i]].data());
  s_.setZero(width());
  double* s = s_.data() + m;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t pos = positions_[i];
    const double a = x[i].x;
    if (pos == CompactIndex::kNone || a == 0.0) continue;
    s_.head(m).noalias() += a * Eigen::Map<const Eigen::VectorXd>(base_.data() + size_t{pos} * rank_, m);
    for (const Entry& r : raw_[pos]) s[r.row] += a * r.value;
  }
  gathered_.assign(x.begin(), x.end());
  gathered_version_ = version_;
  p_version_ = UINT64_MAX;  // p_ was of another x
}

const std::vector<uint32_t>& FrequentDirections::positions(std::span<const Coord> x) const {
  gather(x);
  return positions_;
}

const Eigen::VectorXd& FrequentDirections::product(std::span<const Coord> x) const {
  gather(x);
  if (p_version_ != w_version_) {  // a new x, S or W
    p_.noalias() = w_.topLeftCorner(rows_, width()) * s_;
    p_version_ = w_version_;
  }
  return p_;
}

void FrequentDirections::multiply(std::span<const Coord> x, Eigen::VectorXd& p) const { p = product(x); }

void FrequentDirections::multiply_all(const std::function<double(uint64_t)>& v, Eigen::VectorXd& p) const {
  const Eigen::Index m = rank_;
  Eigen::VectorXd s = Eigen::VectorXd::Zero(width());
  for (uint32_t pos = 0; pos < columns(); ++pos) {
    const double a = v(index_.slot(pos));
    if (a == 0.0) continue;
    s.head(m).noalias() += a * Eigen::Map<const Eigen::VectorXd>(base_.data() + size_t{pos} * rank_, m);
    for (const Entry& r : raw_[pos]) s(m + r.row) += a * r.value;
  }
  p.noalias() = w_.topLeftCorner(rows_, width()) * s;
}

void FrequentDirections::multiply_transpose(const Eigen::VectorXd& c, std::vector<double>& out) const {
  const Eigen::VectorXd v = w_.topLeftCorner(rows_, width()).transpose() * c.head(rows_);  // Sᵀ(Wᵀc)
  base_transpose(v, out);
}

void FrequentDirections::base_transpose(const Eigen::VectorXd& e, std::vector<double>& out) const {
  const Eigen::Index m = rank_;
  out.resize(columns());
  for (uint32_t pos = 0; pos < columns(); ++pos)
    out[pos] = Eigen::Map<const Eigen::VectorXd>(base_.data() + size_t{pos} * rank_, m).dot(e.head(m));
  const double* er = e.data() + m;
  for (const Logged& r : log_) out[r.position] += er[r.row] * r.value;  // each column's oldest first
}

const Eigen::VectorXd& FrequentDirections::base_product(std::span<const Coord> x) const {
  gather(x);
  return s_;
}

void FrequentDirections::base_column(uint32_t position, Eigen::VectorXd& out) const {
  const Eigen::Index m = rank_;
  out.setZero(width());
  out.head(m) = Eigen::Map<const Eigen::VectorXd>(base_.data() + size_t{position} * rank_, m);
  for (const Entry& r : raw_[position]) out(m + r.row) += r.value;
}

void FrequentDirections::to_base(const Eigen::VectorXd& c, Eigen::VectorXd& e) const {
  e.head(width()).noalias() += w_.topLeftCorner(rows_, width()).transpose() * c.head(rows_);
}

void FrequentDirections::column(uint32_t position, Eigen::VectorXd& out) const {
  Eigen::VectorXd s;
  base_column(position, s);
  out.noalias() = w_.topLeftCorner(rows_, width()) * s;
}

double FrequentDirections::value(uint32_t row, uint32_t position) const {
  Eigen::VectorXd c;
  column(position, c);
  return c(row);
}

bool FrequentDirections::append(std::span<const Coord> x, double c, Eigen::VectorXd* companion) {
  Eigen::VectorXd* const one[1] = {companion};
  return append(x, c, std::span<Eigen::VectorXd* const>(one));
}

bool FrequentDirections::append(std::span<const Coord> x, double c,
                                std::span<Eigen::VectorXd* const> companions) {
  return append(x, c, companions, nullptr);
}

bool FrequentDirections::append(std::span<const Coord> x, double c,
                                std::span<Eigen::VectorXd* const> companions, const GramEigen* gram_eig) {
  size_t fresh = 0, nonzero = 0;
  {
    const std::vector<uint32_t>& pos = positions(x);
    for (size_t i = 0; i < x.size(); ++i) {
      nonzero += x[i].x != 0.0;
      fresh += x[i].x != 0.0 && pos[i] == CompactIndex::kNone;
    }
  }
  if (nonzero == 0) return false;  // a zero row: BᵀB unchanged
  if (columns() + fresh > cap_)
    throw ConfigError("sketch: this example would bring the distinct features to " +
                      std::to_string(columns() + fresh) + ", past the cap of " + std::to_string(cap_) +
                      " (memory 8 m bytes each); raise the cap, use fewer bits (-b) or use --matrix diag");
  const bool shrank = rows_ == 2 * rank_;
  if (shrank) shrink(companions, gram_eig);
  const uint32_t r = rows_;
  // G's new column: B (c x) over the rows in use, before the row joins (this gathers x: positions_ are x's).
  gram_.col(r).head(r).noalias() = c * product(x);
  gram_.row(r).head(r) = gram_.col(r).head(r).transpose();
  // The row joins R as raw row k, and W as the unit row picking it.
  if (width() + 1 > w_.cols()) w_.conservativeResize(Eigen::NoChange, 2 * w_.cols());
  const Eigen::Index kcol = width();
  w_.col(kcol).setZero();
  w_.row(r).head(kcol + 1).setZero();
  w_(r, kcol) = 1.0;
  double norm2 = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const Coord& e = x[i];
    if (e.x == 0.0) continue;
    uint32_t p = positions_[i];
    if (p == CompactIndex::kNone) {
      p = index_.insert(e.slot);  // x may list a new slot twice: the second finds the first's position
      if (p == raw_.size()) {
        base_.resize(base_.size() + rank_, 0.0);
        raw_.emplace_back();
      }
    }
    const double v = c * e.x;
    raw_[p].push_back({k_, v});
    log_.push_back({p, k_, v});
    norm2 += v * v;
  }
  gram_(r, r) = norm2;
  ++k_;
  ++version_;
  ++w_version_;
  rows_ = r + 1;
  return shrank;
}

void FrequentDirections::shrink(std::span<Eigen::VectorXd* const> companions, const GramEigen* gram_eig) {
  const Eigen::Index l = rows_, m = rank_;
  if (gram_eig == nullptr || gram_eig->values.size() < l || gram_eig->vectors.rows() < l ||
      gram_eig->vectors.cols() < l) {
    eig_.compute(gram_.topLeftCorner(l, l));  // ascending
    const GramEigen own{eig_.eigenvalues(), eig_.eigenvectors()};
    shrink(companions, &own);
    return;
  }
  const Eigen::VectorXd& mu = gram_eig->values;
  const Eigen::MatrixXd& vectors = gram_eig->vectors;
  // δ: the (m+1)-th largest σ², or 0 when it is rounding (below kRounding of the largest): data of rank <= m
  // is never shrunk, so a learner can tell "nothing removed" (Δ = 0) exactly.
  const double top = std::max(mu(l - 1), 0.0), next = mu(l - 1 - m);
  const double delta = next > kRounding * top ? next : 0.0;
  Eigen::MatrixXd w(m, l);  // kept rows = w B: row k = sqrt((μ_k − δ)/μ_k) u_kᵀ
  Eigen::VectorXd kept(m);  // their squared norms μ_k − δ (the rows are orthogonal)
  for (Eigen::Index k = 0; k < m; ++k) {
    const double s = mu(l - 1 - k);
    w.row(k) = (s > delta ? std::sqrt((s - delta) / s) : 0.0) * vectors.col(l - 1 - k).head(l).transpose();
    kept(k) = s > delta ? s - delta : 0.0;
  }
  last_shrink_ = w;
  const Eigen::MatrixXd rotated = w * w_.topLeftCorner(l, width());
  w_.topLeftCorner(m, width()) = rotated;
  ++w_version_;
  gram_.setZero();
  gram_.topLeftCorner(m, m).diagonal() = kept;
  for (Eigen::VectorXd* companion : companions) {
    if (companion == nullptr) continue;
    Eigen::VectorXd v = Eigen::VectorXd::Zero(2 * m);
    v.head(m).noalias() = w * companion->head(l);
    companion->swap(v);
  }
  shrinkage_ += delta;
  rows_ = rank_;
  orthogonal_ = rank_;
  if (k_ >= raw_limit()) rebase();
}

void FrequentDirections::rebase() {
  const Eigen::Index m = rank_;
  const Eigen::Index n = static_cast<Eigen::Index>(columns());
  Eigen::Map<Eigen::MatrixXd> c(base_.data(), m, n);
  rebase_scratch_.resize(base_.size());  // kept between calls: no page faults for a fresh block each time
  Eigen::Map<Eigen::MatrixXd> rebased(rebase_scratch_.data(), m, n);
  rebased.noalias() = w_.topLeftCorner(m, m) * c;
  // R's part, in the order appended (each column's entries oldest first, as the column lists hold them).
  double* out = rebase_scratch_.data();
  constexpr size_t kAhead = 16;  // the columns are scattered: ask for those of the entries ahead
  for (size_t e = 0; e < log_.size(); ++e) {
    if (e + kAhead < log_.size()) {
      const uint32_t ahead = log_[e + kAhead].position;
      __builtin_prefetch(out + size_t{ahead} * rank_, 1);
      __builtin_prefetch(&raw_[ahead], 1);
    }
    const Logged& r = log_[e];
    double* o = out + size_t{r.position} * rank_;
    const double* w = w_.col(m + r.row).data();
    for (Eigen::Index i = 0; i < m; ++i) o[i] += r.value * w[i];
    raw_[r.position].clear();
  }
  log_.clear();
  base_.swap(rebase_scratch_);
  k_ = 0;
  ++version_;
  ++w_version_;
  w_.setZero();
  w_.topLeftCorner(m, m).setIdentity();
}

void FrequentDirections::scale(double f) {
  w_.topLeftCorner(rows_, width()) *= std::sqrt(f);
  ++w_version_;
  gram_ *= f;
  shrinkage_ *= f;
}

void FrequentDirections::row(uint32_t j, std::vector<Coord>& out) const {
  Eigen::VectorXd unit = Eigen::VectorXd::Zero(rows_);
  unit(j) = 1.0;
  std::vector<double> values;
  multiply_transpose(unit, values);
  out.clear();
  for (uint32_t pos = 0; pos < values.size(); ++pos)
    if (values[pos] != 0.0) out.push_back({index_.slot(pos), values[pos]});
}

uint32_t FrequentDirections::hold(uint64_t slot) {
  const uint32_t found = index_.find(slot);
  if (found != CompactIndex::kNone) return found;
  if (columns() + 1 > cap_)
    throw ConfigError("sketch: holding slot " + std::to_string(slot) +
                      " would take the distinct features past the "
                      "cap of " +
                      std::to_string(cap_));
  const uint32_t p = index_.insert(slot);
  base_.resize(base_.size() + rank_, 0.0);
  raw_.emplace_back();
  ++version_;
  return p;
}

void FrequentDirections::clear() {
  rows_ = 0;
  orthogonal_ = 0;
  k_ = 0;
  shrinkage_ = 0.0;
  index_.clear();
  base_.clear();
  raw_.clear();
  log_.clear();
  ++version_;
  ++w_version_;
  w_.setZero(2 * Eigen::Index{rank_}, 4 * Eigen::Index{rank_});
  gram_.setZero();
}

void FrequentDirections::save(ModelWriter& out) const {
  out.put_u32(rank_);
  out.put_u32(rows_);
  out.put_u32(orthogonal_);
  out.put_f64(shrinkage_);
  const uint64_t n = columns();
  out.put_u64(n);
  out.put_values(index_.slots().data(), n);
  out.put_values(base_.data(), n * rank_);
  out.put_u32(k_);
  out.put_u64(log_.size());
  for (uint32_t pos = 0; pos < n; ++pos) {  // per column, oldest first, with the column's count
    out.put_u32(static_cast<uint32_t>(raw_[pos].size()));
    for (const Entry& r : raw_[pos]) {
      out.put_u32(r.row);
      out.put_f64(r.value);
    }
  }
  for (Eigen::Index j = 0; j < width(); ++j) out.put_values(w_.col(j).data(), rows_);
  for (uint32_t k = 0; k < rows_; ++k) out.put_values(gram_.col(k).data(), rows_);
}

void FrequentDirections::load(ModelReader& in) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": sketch state: " + what);
  };
  const uint32_t rank = in.get_u32("sketch rank");
  if (rank != rank_)
    throw bad("saved with rank " + std::to_string(rank) + ", this run has " + std::to_string(rank_));
  const uint32_t rows = in.get_u32("sketch rows");
  const uint32_t orthogonal = in.get_u32("sketch orthogonal rows");
  const double shrinkage = in.get_f64("sketch shrinkage");
  if (rows > 2 * rank_) throw bad("more rows than the buffer holds");
  if ((orthogonal != 0 && orthogonal != rank_) || orthogonal > rows)
    throw bad("bad count of orthogonal rows");
  if (!(shrinkage >= 0.0) || !std::isfinite(shrinkage)) throw bad("shrinkage not finite and >= 0");
  const uint64_t n = in.get_u64("sketch columns");
  if (n > cap_)
    throw bad("holds " + std::to_string(n) + " slots, past this run's cap of " + std::to_string(cap_));
  if (n > 0 && rows == 0) throw bad("columns without rows");
  if (n * (8 + uint64_t{rank_} * 8 + 4) > in.remaining())  // n <= 2^28, rank <= 2^10
    throw bad("column count does not fit the file");
  CompactIndex index;
  for (uint64_t i = 0; i < n; ++i)
    if (index.insert(in.get_u64("sketch slot")) != i) throw bad("a slot listed twice");
  std::vector<double> base(n * rank_);
  in.get_raw(base.data(), base.size() * sizeof(double), "sketch base rows");
  for (double v : base)
    if (!std::isfinite(v)) throw bad("a non-finite entry");
  const uint32_t k = in.get_u32("sketch raw rows");
  const uint64_t total = in.get_u64("sketch raw entries");
  if (k > (uint32_t{1} << 24) || total > in.remaining() / 12)
    throw bad("raw row count does not fit the file");
  std::vector<std::vector<Entry>> raw(n);
  uint64_t entries = 0;
  for (uint64_t pos = 0; pos < n; ++pos) {
    const uint32_t count = in.get_u32("sketch column entry count");
    if (count > total - entries) throw bad("more raw entries than announced");
    raw[pos].reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t row = in.get_u32("sketch raw row");
      const double value = in.get_f64("sketch raw value");
      if (row >= k || !std::isfinite(value)) throw bad("a raw entry out of range or not finite");
      raw[pos].push_back({row, value});
    }
    entries += count;
  }
  if (entries != total) throw bad("fewer raw entries than announced");
  const Eigen::Index width = Eigen::Index{rank_} + k;
  if (uint64_t(width) * rows * 8 + uint64_t{rows} * rows * 8 > in.remaining())
    throw bad("raw row count does not fit the file");
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(2 * Eigen::Index{rank_},
                                            std::max<Eigen::Index>(4 * Eigen::Index{rank_}, width + 1));
  for (Eigen::Index j = 0; j < width; ++j)
    in.get_raw(w.col(j).data(), rows * sizeof(double), "sketch combination");
  if (!w.allFinite()) throw bad("a non-finite combination entry");
  const size_t L = 2 * size_t{rank_};
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(L, L);
  for (uint32_t r = 0; r < rows; ++r) in.get_raw(gram.col(r).data(), rows * sizeof(double), "sketch gram");
  for (uint32_t r = 0; r < rows; ++r) {
    if (!(gram(r, r) >= 0.0)) throw bad("a Gram diagonal entry < 0");
    for (uint32_t i = 0; i < rows; ++i)
      if (!std::isfinite(gram(i, r))) throw bad("a non-finite Gram entry");
  }
  rows_ = rows;
  orthogonal_ = orthogonal;
  k_ = k;
  shrinkage_ = shrinkage;
  index_ = std::move(index);
  base_.swap(base);
  // R in row order; a row's entries in a column keep the column's order (a slot listed twice in one row).
  std::vector<Logged> log;
  log.reserve(entries);
  for (uint32_t pos = 0; pos < n; ++pos)
    for (const Entry& r : raw[pos]) log.push_back({pos, r.row, r.value});
  std::stable_sort(log.begin(), log.end(), [](const Logged& a, const Logged& b) { return a.row < b.row; });
  raw_.swap(raw);
  log_.swap(log);
  ++version_;
  ++w_version_;
  w_.swap(w);
  gram_.swap(gram);
}

}  // namespace lepus
