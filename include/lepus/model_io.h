// Binary model streams. A model file is: magic, format version, lepus version, the options that shape
// features and learner, the learner's own state, then a CRC-32 of everything before it (src/io/model_file).
// Learners only see ModelWriter/ModelReader: typed little-endian values, each read checked for size.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace lepus {

class ModelWriter {
 public:
  // In memory (bytes() holds everything put), or streaming: every chunk of about 1 MiB goes to `sink`, so saving
  // a large model costs a buffer, not a copy of the state.
  using Sink = std::function<void(const uint8_t*, size_t)>;
  ModelWriter() = default;
  explicit ModelWriter(Sink sink) : sink_(std::move(sink)) {}
  void put_u8(uint8_t v) { append(&v, 1); }
  void put_u32(uint32_t v) { append(&v, sizeof v); }
  void put_u64(uint64_t v) { append(&v, sizeof v); }
  void put_f32(float v) {
    count_nonfinite(&v, 1);
    append(&v, sizeof v);
  }
  void put_f64(double v) {
    count_nonfinite(&v, 1);
    append(&v, sizeof v);
  }
  // Raw float or double records (a learner's slots): counted like put_f32 / put_f64; integer records (slot
  // indices) are typed too.
  template <class T>
  void put_values(const T* values, size_t n) {
    count_nonfinite(values, n);
    append(values, n * sizeof(T));
  }
  // Non-finite values among what was put: a model holding one is never written, since loading refuses it.
  uint64_t nonfinite() const { return nonfinite_; }
  // Floating-point values put (put_f32, put_f64, put_values), each checked for finiteness, and bytes put
  // untyped (put_raw): a test of a learner's state requires every number typed, so that every one is checked.
  uint64_t values() const { return values_; }
  uint64_t untyped_bytes() const { return untyped_bytes_; }
  void put_string(const std::string& s) {
    put_u64(s.size());
    append(s.data(), s.size());
  }
  void put_raw(const void* data, size_t n) {
    untyped_bytes_ += n;
    append(data, n);
  }
  // Streaming: hands what is buffered to the sink.
  void flush() {
    if (!sink_ || bytes_.empty()) return;
    sink_(bytes_.data(), bytes_.size());
    flushed_ += bytes_.size();
    bytes_.clear();
  }
  uint64_t size() const { return flushed_ + bytes_.size(); }    // bytes put so far
  const std::vector<uint8_t>& bytes() const { return bytes_; }  // in memory: everything put

 private:
  void append(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
    if (sink_ && bytes_.size() >= kChunk) flush();
  }
  template <class T>
  void count_nonfinite(const T* v, size_t n) {
    static_assert(std::is_arithmetic_v<T>, "put_values takes number records");
    // Integer records (slot indices) are typed, and always finite.
    if constexpr (std::is_floating_point_v<T>) {
      values_ += n;
      for (size_t i = 0; i < n; ++i) nonfinite_ += !std::isfinite(v[i]);
    }
  }
  static constexpr size_t kChunk = size_t{1} << 20;
  Sink sink_;
  std::vector<uint8_t> bytes_;
  uint64_t flushed_ = 0;
  uint64_t nonfinite_ = 0;
  uint64_t values_ = 0;
  uint64_t untyped_bytes_ = 0;
};

// Reads what a ModelWriter wrote; every read past the end throws ModelFormatError naming `what`.
class ModelReader {
 public:
  ModelReader(const uint8_t* data, size_t size, std::string source)
      : p_(data), end_(data + size), source_(std::move(source)) {}
  uint8_t get_u8(const char* what);
  uint32_t get_u32(const char* what);
  uint64_t get_u64(const char* what);
  float get_f32(const char* what);
  double get_f64(const char* what);
  std::string get_string(const char* what);
  void get_raw(void* out, size_t n, const char* what);
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const std::string& source() const { return source_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  std::string source_;
};

}  // namespace lepus
