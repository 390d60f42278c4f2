// Bounds-checked reads of a model's bytes: a short file is a ModelFormatError, never a crash.
#include <cstring>

#include "lepus/errors.h"
#include "lepus/model_io.h"

namespace lepus {

void ModelReader::get_raw(void* out, size_t n, const char* what) {
  if (n == 0)
    return;  // out may be null (an empty vector's data()); memcpy must not see it (found by fuzzing)
  if (remaining() < n) throw ModelFormatError(source_ + ": truncated model (while reading " + what + ")");
  std::memcpy(out, p_, n);
  p_ += n;
}
namespace {
template <typename T>
T get(ModelReader& in, const char* what) {
  T v;
  in.get_raw(&v, sizeof v, what);
  return v;
}
}  // namespace

uint8_t ModelReader::get_u8(const char* what) { return get<uint8_t>(*this, what); }
uint32_t ModelReader::get_u32(const char* what) { return get<uint32_t>(*this, what); }
uint64_t ModelReader::get_u64(const char* what) { return get<uint64_t>(*this, what); }
float ModelReader::get_f32(const char* what) { return get<float>(*this, what); }
double ModelReader::get_f64(const char* what) { return get<double>(*this, what); }
std::string ModelReader::get_string(const char* what) {
  const uint64_t n = get_u64(what);
  if (n > remaining()) throw ModelFormatError(source_ + ": truncated model (while reading " + what + ")");
  std::string s(reinterpret_cast<const char*>(p_), n);
  p_ += n;
  return s;
}

}  // namespace lepus
