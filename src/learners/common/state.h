// A learner's model state, declared once. A learner lists its saved fields in file order in one function,
//
//   template <class Self, class V> static void state(Self& self, V& v) {
//     v.tag(kStateTag);
//     v.number("t", self.t_, common::kCount);
//     v.clip(self.clip_);
//     v.slots(self.slots_, slot_ok, slot_text);
//   }
//
// and three visitors walk it (Self is const for the first and third):
//   StateSaver  the bytes of a model file;
//   StateLoader reads each field and refuses one outside its declared bounds (a ModelFormatError naming the
//               learner and the field); the learner changes only after the last field has been read, so a
//               refused state leaves it as it was;
//   StateText   --readable_full's text: "name value" per number, the label range, a line per kept slot.
// The fields: numbers (f32 or f64, with Bounds), whole numbers, flags, optional numbers, text, modes (choice),
// values the state must share with the learner (fixed: a table size, -b), the label range, hashed slot tables
// (slots, strided, records), a dense learner's compact index (index, or count then index_slots), vectors and
// symmetric matrices (vector, upper; rows: a row per slot of w_i then m_ij; block: a top-left block), numbers
// that may be +inf (unbounded), components with their own save and load (part, held by unique_ptr or by value:
// a matrix, a sketch, a kernel setting; make() may give another type the member is assigned from, and a load
// taking the learner's name gets it) or their own declaration (nested), lists of components (parts: one per
// problem of a multiclass table), learners a wrapper owns (learners, the declaration's last field: loaded in
// place and loaded back from their earlier state when a later one is refused), parts whose layout only their owner knows (custom), stored
// values that are not members (value; derived() sets what follows from them), tracked vectors, parallel columns
// saved row by row (columns: per-point weights), an optional number saved as one number, 0 when absent
// (zero_if_absent), and
// readable-only lines (lines). A member that follows from fields read is set at the
// commit (derived), and settle(self, f) calls f(self) after it (scratch sized to the state read). number(),
// flag(), whole(), count(), choice(), index(), Eigen vector(), upper(), part(), value(), unbounded(),
// optional(), zero_if_absent() and columns() return what they visited (for the loader, what it read), so
// that a later field's declaration, or a check() between fields, may depend on an earlier one. A state whose
// layout changed names its versions (version(): text tags, newest first, returning 0 for the newest;
// versions(oldest, newest): numbered); a field an older version lacks is declared absent(field, value) there
// (the loader sets it), an older slot layout older_slots<Old>(table, convert, ok). Only the newest version is
// ever saved or written as text. Every field passed to a visitor must be the learner's own member (the loader
// assigns it at the commit, after state() has returned): never a local.
#pragma once
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/zeroed_table.h"
#include "learners/common/plumbing.h"
#include "lepus/errors.h"
#include "lepus/learner.h"
#include "lepus/model_io.h"
#include "lepus/options.h"
#include "sketch/compact_index.h"
#include "sketch/dense_io.h"
#include "sketch/matrix.h"

namespace lepus::common {

// The values a saved number may take: finite, within the range (OptionSpec's, as --help shows it), and a
// whole number when `whole`.
struct Bounds {
  OptionSpec::Range range;
  bool whole = false;
  bool contains(double v) const { return range.contains(v) && (!whole || v == std::floor(v)); }
};
inline const Bounds kAnyNumber{};
inline const Bounds kNonNegative{{0.0}};
inline const Bounds kPositive{OptionSpec::Range::above(0.0)};
inline const Bounds kCount{{0.0}, true};
inline Bounds above(double lo) { return {OptionSpec::Range::above(lo)}; }

template <class T>
bool any_nonzero(const T* fields, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (fields[k] != T{0}) return true;
  return false;
}
// A slot as its fields: a struct of one number type (or the number itself), read and written whole.
template <class Field, class Slot>
auto fields_of(Slot& s) {
  static_assert(std::is_trivially_copyable_v<std::remove_const_t<Slot>> && sizeof(Slot) % sizeof(Field) == 0);
  if constexpr (std::is_const_v<Slot>)
    return reinterpret_cast<const Field*>(&s);
  else
    return reinterpret_cast<Field*>(&s);
}
// A mode is stored as a u8 or a u32.
template <class T>
concept StoredMode = std::same_as<T, uint8_t> || std::same_as<T, uint32_t>;
// A stored number (value()): a u8, u32 or u64 code, or an f64.
template <class T>
concept StoredNumber = StoredMode<T> || std::same_as<T, uint64_t> || std::same_as<T, double>;
inline void put(ModelWriter& out, float x) { out.put_f32(x); }
inline void put(ModelWriter& out, double x) { out.put_f64(x); }
inline void put(ModelWriter& out, uint8_t x) { out.put_u8(x); }
inline void put(ModelWriter& out, uint32_t x) { out.put_u32(x); }
inline void put(ModelWriter& out, uint64_t x) { out.put_u64(x); }
inline void put(ModelWriter& out, const std::string& x) { out.put_string(x); }

// What saving and writing text share: both visit the learner as it is, in the newest layout, so the parts of a
// declaration only a load of an older or a bad state needs (checks between fields read, refusals, fields an
// older layout lacks) do nothing.
class VisitsTheLearnerAsItIs {
 public:
  void check(bool, const std::string&) {}
  void refuse(const std::string&) {}
  template <class T, class U>
  void absent(T&, U) {}
  template <class T, class Make>
  void absent_made(T&, Make&&) {}
  template <class Old, class Slot, class Convert, class Ok>
  void older_slots(const ZeroedTable<Slot>&, Convert&&, Ok&&) {}
  template <class T, class U>
  void derived(T&, U) {}
  template <class Self, class F>
  void settle(Self&, F&&) {}
};

class StateSaver : public VisitsTheLearnerAsItIs {
 public:
  explicit StateSaver(ModelWriter& out) : out_(out) {}
  void tag(uint32_t t) { out_.put_u32(t); }
  size_t version(std::initializer_list<const char*> tags) {
    out_.put_string(*tags.begin());
    return 0;
  }
  uint32_t versions(uint32_t, uint32_t newest) {
    out_.put_u32(newest);
    return newest;
  }
  template <std::floating_point T>  // f32 or f64 in the file
  T number(const char*, T x, const Bounds& = kAnyNumber) {
    put(out_, x);
    return x;
  }
  template <std::integral I>  // a u64 in the file
  uint64_t whole(const char*, I x, uint64_t = 0, uint64_t = ~uint64_t{0}) {
    out_.put_u64(static_cast<uint64_t>(x));
    return static_cast<uint64_t>(x);
  }
  uint64_t count(const char*, uint64_t n, uint64_t) {
    out_.put_u64(n);
    return n;
  }
  template <StoredNumber Stored>
  Stored value(const char*, Stored x, Stored, Stored) {
    put(out_, x);
    return x;
  }
  std::string value(const char*, const std::string& x) {
    out_.put_string(x);
    return x;
  }
  size_t version(std::initializer_list<uint32_t> tags) {
    out_.put_u32(*tags.begin());
    return 0;
  }
  template <class Save, class Load, class Text>
  void custom(Save&& save, Load&&, Text&&) {
    save(out_);
  }
  void learners(const std::vector<std::unique_ptr<Learner>>& list, bool predict_only) {
    for (const auto& l : list) predict_only ? save_for_prediction(*l, out_) : l->save(out_);
  }
  void text(const char*, const std::string& x, void (*)(const std::string&) = nullptr) { out_.put_string(x); }
  void fixed(const char*, const std::string& value, const std::string&) { out_.put_string(value); }
  double unbounded(const char*, double x, const Bounds& = kAnyNumber) {
    out_.put_f64(std::isfinite(x) ? x : 0.0);
    return x;
  }
  template <class P, class... More>
  void nested(const P& p, More... more) {
    P::state(p, *this, more...);
  }
  template <class M>
  void rows(const char*, const Eigen::VectorXd& w, const M& m, uint64_t n, uint64_t cols, bool upper,
            uint64_t, uint64_t) {
    if (n > static_cast<uint64_t>(std::min(w.size(), m.rows())) || cols > static_cast<uint64_t>(m.cols()))
      throw std::logic_error("declared rows larger than their matrix");
    for (uint64_t i = 0; i < n; ++i) {
      out_.put_f64(w(static_cast<Eigen::Index>(i)));
      for (uint64_t j = upper ? i : 0; j < cols; ++j)
        out_.put_f64(m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
    }
  }
  template <class P, class Make, class Text>
  const P& part(const char*, const std::unique_ptr<P>& p, Make&&, Text&&) {
    p->save(out_);
    return *p;
  }
  template <class P, class Make, class Text>
  const P& part(const char*, const P& p, Make&&, Text&&) {
    p.save(out_);
    return p;
  }
  void vector(const char*, const std::vector<double>& x, uint64_t n) {
    if (n > x.size()) throw std::logic_error("a declared vector smaller than its count");
    out_.put_values(x.data(), n);
  }
  void block(const char*, const Eigen::MatrixXd& m, uint64_t rows, uint64_t cols, uint64_t, uint64_t) {
    if (rows > static_cast<uint64_t>(m.rows()) || cols > static_cast<uint64_t>(m.cols()))
      throw std::logic_error("a declared block larger than its matrix");
    for (uint64_t j = 0; j < cols; ++j) out_.put_values(m.col(static_cast<Eigen::Index>(j)).data(), rows);
  }
  template <class Ok>
  void tracked(const char*, const TrackedVector& t, int, Ok&&) {
    t.save(out_);
  }
  uint64_t index(const char* name, const CompactIndex& index, uint64_t cap, int bits = 64) {
    index_slots(name, index, count(name, index.size(), cap), bits);
    return index.size();
  }
  void index_slots(const char*, const CompactIndex& index, uint64_t, int = 64) {
    dense_io::put_index(out_, index);
  }
  const Eigen::VectorXd& vector(const char*, const Eigen::VectorXd& x, uint64_t n, uint64_t, double = 0.0) {
    out_.put_values(x.data(), n);
    return x;
  }
  const Eigen::MatrixXd& upper(const char*, const Eigen::MatrixXd& m, uint64_t n, uint64_t) {
    dense_io::put_upper(out_, m, n);
    return m;
  }
  template <class F>
  void lines(F&&) {}
  template <StoredMode Stored = uint8_t>
  bool flag(const char*, bool b) {
    put(out_, static_cast<Stored>(b ? 1 : 0));
    return b;
  }
  std::optional<double> optional(const char*, const std::optional<double>& x, const Bounds& = kAnyNumber) {
    out_.put_u8(x ? 1 : 0);
    out_.put_f64(x.value_or(0.0));
    return x;
  }
  void clip(const LabelClip& c) { c.save(out_); }
  template <class Field = double, class Slot, class Ok, class Text>
  void slots(const ZeroedTable<Slot>& t, Ok&&, Text&&, size_t n = sizeof(Slot) / sizeof(Field)) {
    save_table(
        out_, t.size(), touched(t), [&](uint64_t i) { return any_nonzero(fields_of<Field>(t[i]), n); },
        [&](uint64_t i) { out_.put_values(fields_of<Field>(t[i]), n); });
  }
  template <std::unsigned_integral I>  // u8, u32 or u64 in the file
  void fixed(const char*, I value, const std::string& = "") {
    put(out_, value);
  }
  template <class Stored = uint8_t, class E>
  requires StoredMode<Stored> E choice(const char*, E e, std::initializer_list<const char*>) {
    put(out_, static_cast<Stored>(e));
    return e;
  }
  template <class T, class Ok, class Text>
  void strided(const ZeroedTable<T>& t, unsigned shift, size_t n, Ok&& ok, Text&& text, size_t kept = 0) {
    fixed("table size", uint64_t{t.size() >> shift});
    records(t, t.size() >> shift, shift, n, ok, text, kept);
  }
  template <class T, class Ok, class Text>
  void records(const ZeroedTable<T>& t, uint64_t, unsigned shift, size_t n, Ok&&, Text&&, size_t kept = 0) {
    save_count_and_records(
        out_, touched(t, shift), [&](uint64_t i) { return any_nonzero(&t[i << shift], kept ? kept : n); },
        [&](uint64_t i) { out_.put_values(&t[i << shift], n); });
  }
  template <class P, class Make, class Text>
  void parts(const char*, const std::vector<std::unique_ptr<P>>& list, Make&&, Text&&) {
    for (const auto& p : list) p->save(out_);
  }
  double zero_if_absent(const char*, const std::optional<double>& x, const Bounds& = kAnyNumber) {
    out_.put_f64(x.value_or(0.0));
    return x.value_or(0.0);
  }
  template <class Ok, class... Column>
  std::array<const std::vector<double>*, sizeof...(Column)> columns(const char*, uint64_t n, Ok&&,
                                                                    const Column&... c) {
    for (uint64_t i = 0; i < n; ++i) (out_.put_f64(c[i]), ...);
    return {&c...};
  }

 private:
  ModelWriter& out_;
};

class StateLoader {
 public:
  StateLoader(ModelReader& in, std::string who) : in_(in), who_(std::move(who)) {}
  void tag(uint32_t t) {
    if (in_.get_u32((who_ + " state version").c_str()) != t)
      throw bad("not a " + who_ + " state, or an unknown version");
  }
  size_t version(std::initializer_list<const char*> tags) {
    const std::string got = in_.get_string((who_ + " state version").c_str());
    for (size_t k = 0; k < tags.size(); ++k)
      if (got == tags.begin()[k]) return k;
    throw bad("not a " + who_ + " state, or an unknown version");
  }
  // A numbered version from oldest to newest (the one read).
  uint32_t versions(uint32_t oldest, uint32_t newest) {
    const uint32_t got = in_.get_u32((who_ + " state version").c_str());
    if (got < oldest || got > newest) throw bad("not a " + who_ + " state, or an unknown version");
    return got;
  }
  // A condition between fields read (the values number() and whole() returned).
  void check(bool ok, const std::string& what) {
    if (!ok) throw bad(what);
  }
  void refuse(const std::string& what) { throw bad(what); }
  template <std::floating_point T>  // f32 or f64 in the file
  T number(const char* name, T& x, const Bounds& b = kAnyNumber) {
    const T v = read_number<T>(name, b);
    commits_.push_back([&x, v] { x = v; });
    return v;
  }
  template <StoredMode Stored = uint8_t>
  bool flag(const char* name, bool& b) {
    const bool v = read_flag<Stored>(name);
    commits_.push_back([&b, v] { b = v; });
    return v;
  }
  // A whole number in [lo, hi] (a u64 in the file) into an integer member.
  template <std::integral I>
  uint64_t whole(const char* name, I& x, uint64_t lo = 0, uint64_t hi = ~uint64_t{0}) {
    hi = std::min<uint64_t>(hi, static_cast<uint64_t>(std::numeric_limits<I>::max()));
    const uint64_t v = in_.get_u64((who_ + " " + name).c_str());
    if (v < lo || v > hi)
      throw bad(std::string(name) + " " + std::to_string(v) + " is not in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
    commits_.push_back([&x, v] { x = static_cast<I>(v); });
    return v;
  }
  // The size of something declared next (rows held, features), at most cap and no more than 8-byte entries
  // the file still holds: not a member (the next field's own size says it), only read.
  uint64_t count(const char* name, uint64_t, uint64_t cap) {
    const uint64_t n = in_.get_u64((who_ + " " + name + " size").c_str());
    if (n > cap || n > in_.remaining() / 8) throw bad(std::string(name) + " holds more than its cap");
    return n;
  }
  // The compact index of a dense learner's features: their count (at most cap), then their slots (each below
  // 2^bits).
  uint64_t index(const char* name, CompactIndex& index, uint64_t cap, int bits = 64) {
    const uint64_t n = count(name, 0, cap);
    index_slots(name, index, n, bits);
    return n;
  }
  // n slots of a compact index whose count was declared before.
  void index_slots(const char* name, CompactIndex& index, uint64_t n, int bits = 64) {
    auto read = std::make_shared<CompactIndex>(dense_io::get_index(in_, n, who_));
    if (bits < 64)
      for (uint64_t s : read->slots())
        if (s >> bits != 0) throw bad(std::string(name) + ": slot " + std::to_string(s) + " out of range");
    commits_.push_back([&index, read] { index = std::move(*read); });
  }
  // A stored value in [lo, hi] that is not itself a member (derived() sets the members that follow from it).
  // (A number in [lo, hi], so never NaN.)
  template <StoredNumber Stored>
  Stored value(const char* name, Stored, Stored lo, Stored hi) {
    const std::string what = who_ + " " + name;
    Stored v;
    if constexpr (std::is_same_v<Stored, double>)
      v = in_.get_f64(what.c_str());
    else if constexpr (sizeof(Stored) == 1)
      v = in_.get_u8(what.c_str());
    else if constexpr (sizeof(Stored) == 4)
      v = in_.get_u32(what.c_str());
    else
      v = in_.get_u64(what.c_str());
    if (!(v >= lo && v <= hi))
      throw bad(std::string(name) + " " + common::number(static_cast<double>(v)) + " is not in [" +
                common::number(static_cast<double>(lo)) + ", " + common::number(static_cast<double>(hi)) +
                "]");
    return v;
  }
  std::string value(const char* name, const std::string&) {
    return in_.get_string((who_ + " " + name).c_str());
  }
  // A u32 tag of one of the versions, newest first: its index.
  size_t version(std::initializer_list<uint32_t> tags) {
    const uint32_t got = in_.get_u32((who_ + " state version").c_str());
    for (size_t k = 0; k < tags.size(); ++k)
      if (got == tags.begin()[k]) return k;
    throw bad("not a " + who_ + " state, or an unknown version");
  }
  // A part whose layout only its owner knows (other learners' states by name, kept examples): load(in, bad)
  // reads it whole, refusing with bad(what), and returns what the commit does.
  template <class Save, class Load, class Text>
  void custom(Save&&, Load&& load, Text&&) {
    commits_.push_back(load(in_, [this](const std::string& what) { return bad(what); }));
  }
  // Learners a wrapper owns, each with its own load (its predict-only one), which changes nothing when it
  // refuses: they load in place, each one's whole state saved first (a predict-only one would lose the rest), and
  // are loaded back from it when a later one is refused. The last field of a declaration (the last learner's
  // state is not kept: nothing after it can be refused).
  void learners(std::vector<std::unique_ptr<Learner>>& list, bool predict_only) {
    for (size_t k = 0; k < list.size(); ++k) {
      Learner& l = *list[k];
      if (k + 1 < list.size()) {
        auto before = std::make_shared<ModelWriter>();
        l.save(*before);
        undos_.push_back([&l, before] {
          ModelReader r(before->bytes().data(), before->bytes().size(), "the state before");
          l.load(r);
        });
      }
      predict_only ? load_for_prediction(l, in_) : l.load(in_);
    }
  }
  // After a refusal: the learners loaded in place get their states back, newest first.
  void undo() {
    for (auto it = undos_.rbegin(); it != undos_.rend(); ++it) (*it)();
    undos_.clear();
  }
  // Text this learner must hold as it is (its rule's name): refused with `refusal` otherwise.
  void fixed(const char* name, const std::string& value, const std::string& refusal) {
    if (in_.get_string((who_ + " " + name).c_str()) != value) throw bad(refusal);
  }
  // A number within b, or +inf (no bound), which the file holds as 0.
  double unbounded(const char* name, double& x, const Bounds& b = kAnyNumber) {
    const double v = in_.get_f64((who_ + " " + name).c_str());
    if (v != 0.0 && !b.contains(v))
      throw bad(std::string(name) + " " + common::number(v) + " is not " + b.range.text());
    const double value = v == 0.0 ? std::numeric_limits<double>::infinity() : v;
    commits_.push_back([&x, value] { x = value; });
    return value;
  }
  // A component that declares its own state (P::state(p, visitor, more...)), read in the same load: it changes
  // at this load's commit, with the learner.
  template <class P, class... More>
  void nested(P& p, More... more) {
    P::state(p, *this, more...);
  }
  // n rows, each w_i then m_ij for j in [0, cols) (upper: j in [i, n), mirrored), into a fresh w of rows_cap
  // entries and m of rows_cap x cols_cap, zero elsewhere; every value finite.
  template <class M>
  void rows(const char* name, Eigen::VectorXd& w, M& m, uint64_t n, uint64_t cols, bool upper,
            uint64_t rows_cap, uint64_t cols_cap) {
    if (rows_cap < n || cols_cap < cols || (upper && cols != n))
      throw std::logic_error("declared rows larger than their capacity");
    const uint64_t per_row = upper ? (n + 1) / 2 + 1 : cols + 1;
    if (n > 0 && per_row > in_.remaining() / 8 / n) throw bad(std::string(name) + " does not fit the file");
    const auto r = static_cast<Eigen::Index>(rows_cap);
    auto rw = std::make_shared<Eigen::VectorXd>(Eigen::VectorXd::Zero(r));
    auto rm = std::make_shared<M>(M::Zero(r, static_cast<Eigen::Index>(cols_cap)));
    const std::string what = who_ + " " + name;
    for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n); ++i) {
      (*rw)(i) = in_.get_f64(what.c_str());
      for (Eigen::Index j = upper ? i : 0; j < static_cast<Eigen::Index>(cols); ++j)
        (*rm)(i, j) = (*rm)(upper ? j : i, upper ? i : j) = in_.get_f64(what.c_str());
    }
    if (!rw->allFinite() || !rm->allFinite()) throw bad(std::string("a non-finite value in ") + name);
    commits_.push_back([&w, &m, rw, rm] {
      w.swap(*rw);
      m.swap(*rm);
    });
  }
  // A member that follows from fields read (set at the commit).
  template <class T, class U>
  void derived(T& x, U value) {
    commits_.push_back([&x, value] { x = value; });
  }
  // f(self) after the commit (scratch sized to the state read).
  template <class Self, class F>
  void settle(Self& self, F&& f) {
    settles_.push_back([&self, f] { f(self); });
  }
  // n numbers into a fresh vector of size >= n entries, the rest `fill`; every one finite. The vector read.
  const Eigen::VectorXd& vector(const char* name, Eigen::VectorXd& x, uint64_t n, uint64_t size,
                                double fill = 0.0) {
    if (size < n) throw std::logic_error("a declared vector smaller than its count");
    auto read =
        std::make_shared<Eigen::VectorXd>(Eigen::VectorXd::Constant(static_cast<Eigen::Index>(size), fill));
    in_.get_raw(read->data(), n * sizeof(double), (who_ + " " + name).c_str());
    if (!read->allFinite()) throw bad(std::string("a non-finite value in ") + name);
    commits_.push_back([&x, read] { x.swap(*read); });
    return *read;
  }
  // A symmetric matrix's upper triangle (dense_io) into a fresh size-square one (size >= n), zero elsewhere;
  // every entry finite.
  const Eigen::MatrixXd& upper(const char* name, Eigen::MatrixXd& m, uint64_t n, uint64_t size) {
    if (n > 0 && (n + 1) / 2 > in_.remaining() / 8 / n)
      throw bad(std::string(name) + " does not fit the file");
    if (size < n) throw std::logic_error("a declared matrix smaller than its count");
    const auto k = static_cast<Eigen::Index>(size);
    auto read = std::make_shared<Eigen::MatrixXd>(Eigen::MatrixXd::Zero(k, k));
    dense_io::get_upper(in_, *read, n, (who_ + " " + name).c_str());
    if (!read->allFinite()) throw bad(std::string("a non-finite value in ") + name);
    commits_.push_back([&m, read] { m.swap(*read); });
    return *read;
  }
  template <class F>
  void lines(F&&) {}
  // A component with its own save and load (a matrix): loaded into a fresh one, make(), then moved in.
  template <class P, class Make, class Text>
  const P& part(const char*, std::unique_ptr<P>& p, Make&& make, Text&&) {
    auto fresh = std::make_shared<std::unique_ptr<P>>(make());
    load_part(**fresh);
    commits_.push_back([&p, fresh] { p = std::move(*fresh); });
    return **fresh;
  }
  // A component held by value: loaded into make() (it may be another type the member is assigned from, such as
  // the point store of a cache of kernel rows), moved in at the commit. The component read.
  template <class P, class Make, class Text>
  const auto& part(const char*, P& p, Make&& make, Text&&) {
    auto fresh = std::make_shared<std::invoke_result_t<Make&>>(make());
    load_part(*fresh);
    commits_.push_back([&p, fresh] { p = std::move(*fresh); });
    return *fresh;
  }
  // n numbers (x's size), every one finite.
  void vector(const char* name, std::vector<double>& x, uint64_t n) {
    if (n > in_.remaining() / 8) throw bad(std::string(name) + " does not fit the file");
    auto read = std::make_shared<std::vector<double>>(n);
    in_.get_raw(read->data(), n * sizeof(double), (who_ + " " + name).c_str());
    for (double v : *read)
      if (!std::isfinite(v)) throw bad(std::string("a non-finite value in ") + name);
    commits_.push_back([&x, read] { x.swap(*read); });
  }
  // The top-left rows x cols block of m, column by column, into a fresh size_rows x size_cols matrix, zero
  // elsewhere; every entry finite.
  void block(const char* name, Eigen::MatrixXd& m, uint64_t rows, uint64_t cols, uint64_t size_rows,
             uint64_t size_cols) {
    if (rows > size_rows || cols > size_cols)
      throw std::logic_error("a declared block larger than its matrix");
    if (rows > 0 && cols > in_.remaining() / 8 / rows)
      throw bad(std::string(name) + " does not fit the file");
    auto read = std::make_shared<Eigen::MatrixXd>(
        Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(size_rows), static_cast<Eigen::Index>(size_cols)));
    for (uint64_t j = 0; j < cols; ++j)
      in_.get_raw(read->col(static_cast<Eigen::Index>(j)).data(), rows * sizeof(double),
                  (who_ + " " + name).c_str());
    if (!read->allFinite()) throw bad(std::string("a non-finite value in ") + name);
    commits_.push_back([&m, read] { m.swap(*read); });
  }
  // A vector of 2^bits entries saved as its nonzero ones, each ok(value).
  template <class Ok>
  void tracked(const char* name, TrackedVector& t, int bits, Ok&& ok) {
    TrackedVector::Entries e = TrackedVector(bits).read(in_);
    for (const auto& [slot, value] : e.nonzero)
      if (!ok(value)) throw bad(std::string(name) + " " + common::number(value) + " out of range");
    commits_.push_back([&t, bits, e] {
      t = TrackedVector(bits);
      t.assign(e);
    });
  }
  // Text, refused when check(text) throws a ConfigError.
  void text(const char* name, std::string& x, void (*check)(const std::string&) = nullptr) {
    std::string v = in_.get_string((who_ + " " + name).c_str());
    try {
      if (check) check(v);
    } catch (const ConfigError& e) {
      throw bad(std::string(name) + ": " + e.what());
    }
    commits_.push_back([&x, v] { x = v; });
  }
  template <class T, class U>
  void absent(T& x, U value) {
    commits_.push_back([&x, value] { x = value; });
  }
  // absent() with the value made by make() (a large one, made only when a state lacks the field).
  template <class T, class Make>
  void absent_made(T& x, Make&& make) {
    auto value = std::make_shared<T>(make());
    commits_.push_back([&x, value] { x = std::move(*value); });
  }
  // An older version's slots (every field finite), each converted to the current Slot and then checked.
  template <class Old, class Slot, class Convert, class Ok>
  void older_slots(ZeroedTable<Slot>& t, Convert&& convert, Ok&& ok) {
    ZeroedTable<Old> old(t.size());
    load_slots(in_, old, who_);
    auto read = std::make_shared<ZeroedTable<Slot>>(t.size());
    old.for_each_touched([&](size_t i) {
      if (all_zero(old[i])) return;
      (*read)[i] = convert(old[i]);
      if (!ok((*read)[i])) throw bad("slot " + std::to_string(i) + " out of range");
    });
    commits_.push_back([&t, read] { t = std::move(*read); });
  }
  // A number that may be absent: a flag, then the number (0 when absent).
  std::optional<double> optional(const char* name, std::optional<double>& x, const Bounds& b = kAnyNumber) {
    const bool given = read_flag((std::string(name) + " flag").c_str());
    const double v = read_number<double>(name, given ? b : kAnyNumber);
    const std::optional<double> read = given ? std::optional<double>(v) : std::nullopt;
    commits_.push_back([&x, read] { x = read; });
    return read;
  }
  void clip(LabelClip& c) {
    LabelClip read = c;
    read.load(in_, who_);
    commits_.push_back([&c, read] { c = read; });
  }
  // Each slot's first n fields (the rest stay 0), every one finite, and ok(slot) true; read into a fresh table.
  template <class Field = double, class Slot, class Ok, class Text>
  void slots(ZeroedTable<Slot>& t, Ok&& ok, Text&&, size_t n = sizeof(Slot) / sizeof(Field)) {
    auto read = std::make_shared<ZeroedTable<Slot>>(t.size());
    load_table_size(in_, t.size(), who_);
    const std::string slot_what = who_ + " slot";
    load_count_and_records(in_, t.size(), n * sizeof(Field), who_, [&](uint64_t i) {
      Field* f = fields_of<Field>((*read)[i]);
      in_.get_raw(f, n * sizeof(Field), slot_what.c_str());
      for (size_t k = 0; k < n; ++k)
        if (!std::isfinite(f[k])) throw bad("non-finite value in slot " + std::to_string(i));
      if (!ok(static_cast<const Slot&>((*read)[i]))) throw bad("slot " + std::to_string(i) + " out of range");
    });
    commits_.push_back([&t, read] { t = std::move(*read); });
  }
  // One of a few modes (a u8 or a u32: the index of its name).
  template <class Stored = uint8_t, class E>
  requires StoredMode<Stored> E choice(const char* name, E& e, std::initializer_list<const char*> names) {
    const std::string what = who_ + " " + name;
    const uint64_t v = sizeof(Stored) == 1 ? in_.get_u8(what.c_str()) : in_.get_u32(what.c_str());
    if (v >= names.size()) throw bad(std::string(name) + " " + std::to_string(v) + " is not a known mode");
    commits_.push_back([&e, v] { e = static_cast<E>(v); });
    return static_cast<E>(v);
  }
  // A number the state must hold as this learner has it (a table size, a mode fixed at construction).
  template <std::unsigned_integral I>  // u8, u32 or u64 in the file
  void fixed(const char* name, I value, const std::string& refusal = "") {
    const std::string what = who_ + " " + name;
    uint64_t got;
    if constexpr (sizeof(I) == 1)
      got = in_.get_u8(what.c_str());
    else if constexpr (sizeof(I) == 4)
      got = in_.get_u32(what.c_str());
    else
      got = in_.get_u64(what.c_str());
    if (got != static_cast<uint64_t>(value))
      throw bad(!refusal.empty() ? refusal
                                 : std::string(name) + " " + std::to_string(got) + ", this learner's is " +
                                       std::to_string(static_cast<uint64_t>(value)));
  }
  // Slot i is entries [i << shift, (i << shift) + n) of t; each finite, and ok(first entry) true. The table
  // size, then the records.
  template <class T, class Ok, class Text>
  void strided(ZeroedTable<T>& t, unsigned shift, size_t n, Ok&& ok, Text&& text, size_t kept = 0) {
    fixed("table size", uint64_t{t.size() >> shift});
    records(t, t.size() >> shift, shift, n, ok, text, kept);
  }
  // The records alone, for a table of `slots` slots (the loaded table's size; it replaces t's); kept: the first
  // so many entries decide whether a slot is saved (0: all n).
  template <class T, class Ok, class Text>
  void records(ZeroedTable<T>& t, uint64_t slots, unsigned shift, size_t n, Ok&& ok, Text&&, size_t = 0) {
    auto read = std::make_shared<ZeroedTable<T>>(slots << shift);
    const std::string slot_what = who_ + " slot";
    load_count_and_records(in_, slots, n * sizeof(T), who_, [&](uint64_t i) {
      T* s = &(*read)[i << shift];
      in_.get_raw(s, n * sizeof(T), slot_what.c_str());
      for (size_t k = 0; k < n; ++k)
        if (!std::isfinite(s[k])) throw bad("non-finite value in slot " + std::to_string(i));
      if (!ok(static_cast<const T*>(s))) throw bad("slot " + std::to_string(i) + " out of range");
    });
    commits_.push_back([&t, read] { t = std::move(*read); });
  }
  // A list of components (one per problem): make() gives the fresh list, as long as the state holds; each is
  // loaded in turn, and the list moved in.
  template <class P, class Make, class Text>
  void parts(const char*, std::vector<std::unique_ptr<P>>& list, Make&& make, Text&&) {
    auto fresh = std::make_shared<std::vector<std::unique_ptr<P>>>(make());
    for (auto& p : *fresh) load_part(*p);
    commits_.push_back([&list, fresh] { list = std::move(*fresh); });
  }
  // An optional number saved as one number, 0 when absent: absent when 0 is read. The number read.
  double zero_if_absent(const char* name, std::optional<double>& x, const Bounds& b = kAnyNumber) {
    const double v = read_number<double>(name, b);
    commits_.push_back([&x, v] { x = v != 0.0 ? std::optional<double>(v) : std::nullopt; });
    return v;
  }
  // n rows of parallel columns (a number per column per row, row by row), every one finite and ok(row) true for
  // each row (its numbers in column order); read into fresh columns of n entries, which it returns.
  template <class Ok, class... Column>
  std::array<const std::vector<double>*, sizeof...(Column)> columns(const char* name, uint64_t n, Ok&& ok,
                                                                    Column&... c) {
    constexpr size_t k = sizeof...(Column);
    static_assert(k > 0);
    if (n > in_.remaining() / (8 * k)) throw bad(std::string("more ") + name + "s than the file holds");
    auto read = std::make_shared<std::array<std::vector<double>, k>>();
    for (auto& column : *read) column.resize(n);
    const std::string what = who_ + " " + name;
    for (uint64_t i = 0; i < n; ++i) {
      std::array<double, k> row;
      for (size_t j = 0; j < k; ++j) row[j] = (*read)[j][i] = in_.get_f64(what.c_str());
      for (double x : row)
        if (!std::isfinite(x))
          throw bad(std::string("a non-finite value in ") + name + " " + std::to_string(i));
      if (!ok(static_cast<const double*>(row.data())))
        throw bad(std::string(name) + " " + std::to_string(i) + " out of range");
    }
    commits_.push_back([read, cs = std::array<std::vector<double>*, k>{&c...}] {
      for (size_t j = 0; j < k; ++j) cs[j]->swap((*read)[j]);
    });
    std::array<const std::vector<double>*, k> out;
    for (size_t j = 0; j < k; ++j) out[j] = &(*read)[j];
    return out;
  }
  // Changes the learner: every field read has passed its check.
  void commit() {
    for (auto& c : commits_) c();
    for (auto& c : settles_) c();
    commits_.clear();
    settles_.clear();
    undos_.clear();
  }

 private:
  ModelFormatError bad(const std::string& what) const {
    return ModelFormatError(in_.source() + ": " + who_ + " state: " + what);
  }
  template <class T>
  T read_number(const char* name, const Bounds& b) {
    const std::string what = who_ + " " + name;
    T v;
    if constexpr (std::is_same_v<T, float>)
      v = in_.get_f32(what.c_str());
    else
      v = in_.get_f64(what.c_str());
    if (!b.contains(v))
      throw bad(std::string(name) + " " + common::number(v) + " is not " +
                (b.whole ? "a whole number " : "") + b.range.text());
    return v;
  }
  template <class P>
  void load_part(P& p) {
    if constexpr (requires { p.load(in_, who_); })
      p.load(in_, who_);
    else
      p.load(in_);
  }
  template <StoredMode Stored = uint8_t>
  bool read_flag(const char* name) {
    const std::string what = who_ + " " + name;
    const uint64_t v = sizeof(Stored) == 1 ? in_.get_u8(what.c_str()) : in_.get_u32(what.c_str());
    if (v > 1) throw bad(std::string(name) + " is not 0 or 1");
    return v == 1;
  }
  ModelReader& in_;
  std::string who_;
  std::vector<std::function<void()>> commits_, settles_, undos_;
};

class StateText : public VisitsTheLearnerAsItIs {
 public:
  explicit StateText(std::ostream& out) : out_(out) {}
  void tag(uint32_t) {}
  size_t version(std::initializer_list<const char*>) { return 0; }
  uint32_t versions(uint32_t, uint32_t newest) { return newest; }
  template <std::floating_point T>  // f32 or f64 in the file
  T number(const char* name, T x, const Bounds& = kAnyNumber) {
    out_ << name << " " << x << "\n";
    return x;
  }
  template <std::integral I>
  uint64_t whole(const char* name, I x, uint64_t = 0, uint64_t = ~uint64_t{0}) {
    out_ << name << " " << x << "\n";
    return static_cast<uint64_t>(x);
  }
  uint64_t count(const char*, uint64_t n, uint64_t) { return n; }
  template <StoredNumber Stored>  // not a member: the learner's lines() say what it means
  Stored value(const char*, Stored x, Stored, Stored) {
    return x;
  }
  std::string value(const char*, const std::string& x) { return x; }
  size_t version(std::initializer_list<uint32_t>) { return 0; }
  template <class Save, class Load, class Text>
  void custom(Save&&, Load&&, Text&& text) {
    text(out_);
  }
  void learners(const std::vector<std::unique_ptr<Learner>>&, bool) {}
  void fixed(const char* name, const std::string& value, const std::string&) {
    out_ << name << " " << value << "\n";
  }
  double unbounded(const char* name, double x, const Bounds& = kAnyNumber) {
    out_ << name << " ";
    if (std::isfinite(x))
      out_ << x << "\n";
    else
      out_ << "none\n";
    return x;
  }
  template <class P, class... More>
  void nested(const P& p, More... more) {
    P::state(p, *this, more...);
  }
  template <class M>
  void rows(const char*, const Eigen::VectorXd&, const M&, uint64_t, uint64_t, bool, uint64_t, uint64_t) {}
  // text(out, part): a component's lines.
  template <class P, class Make, class Text>
  const P& part(const char*, const std::unique_ptr<P>& p, Make&&, Text&& text) {
    text(out_, *p);
    return *p;
  }
  template <class P, class Make, class Text>
  const P& part(const char*, const P& p, Make&&, Text&& text) {
    text(out_, p);
    return p;
  }
  void vector(const char*, const std::vector<double>&, uint64_t) {}
  void block(const char*, const Eigen::MatrixXd&, uint64_t, uint64_t, uint64_t, uint64_t) {}
  uint64_t index(const char*, const CompactIndex& index, uint64_t, int = 64) { return index.size(); }
  void index_slots(const char*, const CompactIndex&, uint64_t, int = 64) {}
  const Eigen::VectorXd& vector(const char*, const Eigen::VectorXd& x, uint64_t, uint64_t, double = 0.0) {
    return x;
  }
  const Eigen::MatrixXd& upper(const char*, const Eigen::MatrixXd& m, uint64_t, uint64_t) { return m; }
  // Lines of the readable text only (a dense learner's weights per slot, in slot order).
  template <class F>
  void lines(F&& f) {
    f(out_);
  }
  // "name slot value" per nonzero entry.
  template <class Ok>
  void tracked(const char* name, const TrackedVector& t, int, Ok&&) {
    t.for_each_nonzero([&](uint64_t i, double v) { out_ << name << " " << i << " " << v << "\n"; });
  }
  void text(const char* name, const std::string& x, void (*)(const std::string&) = nullptr) {
    out_ << name << " " << x << "\n";
  }
  template <StoredMode Stored = uint8_t>
  bool flag(const char* name, bool b) {
    out_ << name << " " << (b ? 1 : 0) << "\n";
    return b;
  }
  std::optional<double> optional(const char* name, const std::optional<double>& x,
                                 const Bounds& = kAnyNumber) {
    out_ << name << " ";
    if (x)
      out_ << *x << "\n";
    else
      out_ << "none\n";
    return x;
  }
  void clip(const LabelClip& c) { c.write_readable(out_); }
  template <std::unsigned_integral I>  // u8, u32 or u64 in the file
  void fixed(const char*, I, const std::string& = "") {}
  template <class Stored = uint8_t, class E>
  requires StoredMode<Stored> E choice(const char* name, E e, std::initializer_list<const char*> names) {
    out_ << name << " " << names.begin()[static_cast<size_t>(e)] << "\n";
    return e;
  }
  template <class T, class Ok, class Text>
  void strided(const ZeroedTable<T>& t, unsigned shift, size_t n, Ok&& ok, Text&& text, size_t kept = 0) {
    records(t, t.size() >> shift, shift, n, ok, text, kept);
  }
  // "index:" and text(out, index, first entry) per kept slot, in index order.
  template <class T, class Ok, class Text>
  void records(const ZeroedTable<T>& t, uint64_t, unsigned shift, size_t n, Ok&&, Text&& text,
               size_t kept = 0) {
    touched(t, shift)([&](uint64_t i) {
      if (!any_nonzero(&t[i << shift], kept ? kept : n)) return;
      out_ << i << ":";
      text(out_, i, &t[i << shift]);
      out_ << "\n";
    });
  }
  // "index:" and text(out, index, slot) per slot with any of its first n fields nonzero, in index order.
  template <class Field = double, class Slot, class Ok, class Text>
  void slots(const ZeroedTable<Slot>& t, Ok&&, Text&& text, size_t n = sizeof(Slot) / sizeof(Field)) {
    t.for_each_touched([&](size_t i) {
      if (!any_nonzero(fields_of<Field>(t[i]), n)) return;
      out_ << i << ":";
      text(out_, i, t[i]);
      out_ << "\n";
    });
  }
  // text(out, index, component) per component.
  template <class P, class Make, class Text>
  void parts(const char*, const std::vector<std::unique_ptr<P>>& list, Make&&, Text&& text) {
    for (size_t k = 0; k < list.size(); ++k) text(out_, k, *list[k]);
  }
  // "name value", or "name none" when absent.
  double zero_if_absent(const char* name, const std::optional<double>& x, const Bounds& b = kAnyNumber) {
    optional(name, x, b);
    return x.value_or(0.0);
  }
  // No lines (a learner writes its per-row lines with lines()).
  template <class Ok, class... Column>
  std::array<const std::vector<double>*, sizeof...(Column)> columns(const char*, uint64_t, Ok&&,
                                                                    const Column&... c) {
    return {&c...};
  }

 private:
  std::ostream& out_;
};

// The three uses, for a learner L with a static state(self, visitor) as above.
// (`more` is passed on to state(), after the visitor: a variant of the state, such as a predict-only one.)
template <class L, class... More>
void save_state(const L& learner, ModelWriter& out, More... more) {
  StateSaver v(out);
  L::state(learner, v, more...);
}
// The name a refusal gives: the learner's, or its state_name() (a wrapper's own).
template <class L>
std::string state_owner(const L& learner) {
  if constexpr (requires { learner.state_name(); })
    return std::string(learner.state_name());
  else
    return std::string(learner.name());
}
template <class L, class... More>
void load_state(L& learner, ModelReader& in, More... more) {
  StateLoader v(in, state_owner(learner));
  try {
    L::state(learner, v, more...);
  } catch (...) {
    v.undo();
    throw;
  }
  v.commit();
}
template <class L, class... More>
void write_state(const L& learner, std::ostream& out, More... more) {
  StateText v(out);
  L::state(learner, v, more...);
}

}  // namespace lepus::common
