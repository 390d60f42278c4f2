#include "learners/common/plumbing.h"

#include <sstream>

namespace lepus::common {

std::string number(double v, int precision) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

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
