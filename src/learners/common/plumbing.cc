#include "learners/common/plumbing.h"

#include <charconv>
#include <locale>
#include <memory>
#include <sstream>

namespace lepus::common {

VectorBuilder& thread_builder(int bits) {
  thread_local std::unique_ptr<VectorBuilder> builder;
  if (!builder || builder->bits() != bits) builder = std::make_unique<VectorBuilder>(bits);
  return *builder;
}

std::string number(double v, int precision) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

namespace {

class ExactNumbers final : public std::num_put<char> {
 protected:
  iter_type do_put(iter_type out, std::ios_base& str, char_type, double v) const override {
    char buf[64];
    const float f = static_cast<float>(v);
    const auto r = std::isfinite(v) && static_cast<double>(f) == v ? std::to_chars(buf, buf + sizeof buf, f)
                                                                   : std::to_chars(buf, buf + sizeof buf, v);
    str.width(0);
    return std::copy(buf, r.ptr, out);
  }
  iter_type do_put(iter_type out, std::ios_base& str, char_type fill, long double v) const override {
    return do_put(out, str, fill, static_cast<double>(v));
  }
};

}  // namespace

void imbue_exact_numbers(std::ostream& out) { out.imbue(std::locale(out.getloc(), new ExactNumbers)); }

void LabelClip::save(ModelWriter& out) const {
  out.put_f32(range_.lo);
  out.put_f32(range_.hi);
}

void LabelClip::load(ModelReader& in, const std::string& who) {
  const float lo = in.get_f32((who + " min label").c_str());
  const float hi = in.get_f32((who + " max label").c_str());
  if (std::isnan(lo) || std::isnan(hi) || (!fixed_lo_ && !fixed_hi_ && lo > hi))
    throw ModelFormatError(in.source() + ": " + who + " label range is not valid");
  if (!fixed_lo_) range_.lo = lo;
  if (!fixed_hi_) range_.hi = hi;
}

void LabelClip::write_readable(std::ostream& out) const {
  out << "min_label " << range_.lo << "\n";
  out << "max_label " << range_.hi << "\n";
}

}  // namespace lepus::common
