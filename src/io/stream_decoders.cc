// zstd, bzip2 and xz input, recognised by their magic bytes as gzip is: each a streaming decoder over the file's
// bytes (Debian's libzstd, libbz2 and liblzma), concatenated frames or streams included. Any other compressed
// format lepus recognises, and compressed data inside a decoded stream (gzip inside gzip), is an error naming
// the format, never compressed bytes read as text.
#include "io/stream_decoders.h"

#include <bzlib.h>
#include <lzma.h>
#include <zstd.h>

#include <cstring>
#include <vector>

#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr size_t kInput = size_t{256} << 10;

// What the decoders share: the file and a buffer of its compressed bytes.
class DecodeSource : public InputSource {
 protected:
  DecodeSource(std::unique_ptr<FdReader> fd, std::string name, const char* format)
      : fd_(std::move(fd)), format_(format), in_(kInput) {
    name_ = std::move(name);
  }
  // More compressed bytes when the buffer is used up; false at the file's end.
  bool refill() {
    if (pos_ < len_) return true;
    len_ = fd_->read(in_.data(), in_.size());
    pos_ = 0;
    return len_ > 0;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw IoError(name_ + ": " + format_ + " data: " + why);
  }

  std::unique_ptr<FdReader> fd_;
  const char* format_;
  std::vector<char> in_;
  size_t pos_ = 0, len_ = 0;
};

class ZstdSource final : public DecodeSource {
 public:
  ZstdSource(std::unique_ptr<FdReader> fd, std::string name)
      : DecodeSource(std::move(fd), std::move(name), "zstd"), z_(ZSTD_createDStream()) {
    if (z_ == nullptr) fail("cannot start the decoder");
  }
  ~ZstdSource() override { ZSTD_freeDStream(z_); }
  size_t read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (!refill()) {
        if (pending_ != 0) fail("the file ends inside a frame (truncated?)");
        return 0;
      }
      ZSTD_inBuffer in{in_.data(), len_, pos_};
      pending_ = ZSTD_decompressStream(z_, &out, &in);
      if (ZSTD_isError(pending_)) fail(ZSTD_getErrorName(pending_));
      pos_ = in.pos;
    }
    return out.pos;
  }

 private:
  ZSTD_DStream* z_;
  size_t pending_ = 0;  // 0 at a frame's end
};

class Bzip2Source final : public DecodeSource {
 public:
  Bzip2Source(std::unique_ptr<FdReader> fd, std::string name)
      : DecodeSource(std::move(fd), std::move(name), "bzip2") {
    start();
  }
  ~Bzip2Source() override { BZ2_bzDecompressEnd(&s_); }
  size_t read(char* buf, size_t n) override {
    s_.next_out = buf;
    s_.avail_out = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    const unsigned before = s_.avail_out;
    while (s_.avail_out == before) {
      if (ended_) {  // a stream ended: another may follow (pbzip2 writes several)
        if (!refill()) return 0;
        BZ2_bzDecompressEnd(&s_);
        start();
        s_.next_out = buf;
        s_.avail_out = before;
      }
      if (!refill()) fail("the file ends inside a stream (truncated?)");
      s_.next_in = in_.data() + pos_;
      s_.avail_in = static_cast<unsigned>(len_ - pos_);
      const int rc = BZ2_bzDecompress(&s_);
      pos_ = len_ - s_.avail_in;
      if (rc == BZ_STREAM_END) {
        ended_ = true;
      } else if (rc != BZ_OK) {
        fail("corrupt (libbz2 error " + std::to_string(rc) + ")");
      }
    }
    return before - s_.avail_out;
  }

 private:
  void start() {
    std::memset(&s_, 0, sizeof s_);
    if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK) fail("cannot start the decoder");
    ended_ = false;
  }
  bz_stream s_{};
  bool ended_ = false;
};

class XzSource final : public DecodeSource {
 public:
  XzSource(std::unique_ptr<FdReader> fd, std::string name)
      : DecodeSource(std::move(fd), std::move(name), "xz") {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) fail("cannot start the decoder");
  }
  ~XzSource() override { lzma_end(&s_); }
  size_t read(char* buf, size_t n) override {
    s_.next_out = reinterpret_cast<uint8_t*>(buf);
    s_.avail_out = n;
    while (s_.avail_out == n && !done_) {
      const bool more = refill();
      s_.next_in = reinterpret_cast<const uint8_t*>(in_.data() + pos_);
      s_.avail_in = len_ - pos_;
      const lzma_ret rc = lzma_code(&s_, more ? LZMA_RUN : LZMA_FINISH);
      pos_ = len_ - s_.avail_in;
      if (rc == LZMA_STREAM_END) {
        done_ = true;
      } else if (rc != LZMA_OK) {
        fail(rc == LZMA_DATA_ERROR || rc == LZMA_FORMAT_ERROR ? "corrupt"
             : rc == LZMA_BUF_ERROR                           ? "the file ends inside a stream (truncated?)"
                                                              : "decoder error " + std::to_string(rc));
      }
    }
    return n - s_.avail_out;
  }

 private:
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool done_ = false;
};

bool starts_with(const std::string& bytes, const char* magic, size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

// Decoded bytes that are themselves compressed: an error naming the format, on the first read.
class CheckedSource final : public InputSource {
 public:
  CheckedSource(std::unique_ptr<InputSource> inner, const char* outer)
      : inner_(std::move(inner)), outer_(outer) {
    name_ = inner_->name();
  }
  size_t read(char* buf, size_t n) override {
    const size_t got = inner_->read(buf, n);
    if (!checked_ && got > 0) {
      checked_ = true;
      if (const char* f = compressed_format(std::string(buf, std::min<size_t>(got, 8))))
        throw IoError(name_ + ": " + f + " data inside " + outer_ +
                      " (compressed twice): decompress the outer layer first, e.g. " + outer_ +
                      " -dc FILE > FILE2");
    }
    return got;
  }
  bool inflates_alone() const override { return inner_->inflates_alone(); }

 private:
  std::unique_ptr<InputSource> inner_;
  const char* outer_;
  bool checked_ = false;
};

}  // namespace

const char* compressed_format(const std::string& bytes) {
  if (starts_with(bytes, "\x1f\x8b", 2)) return "gzip";
  if (starts_with(bytes, "\x28\xb5\x2f\xfd", 4)) return "zstd";
  if (starts_with(bytes, "BZh", 3)) return "bzip2";
  if (starts_with(bytes,
                  "\xfd"
                  "7zXZ\x00",
                  6))
    return "xz";
  if (starts_with(bytes, "PK\x03\x04", 4)) return "zip";
  if (starts_with(bytes, "7z\xbc\xaf\x27\x1c", 6)) return "7z";
  if (starts_with(bytes, "\x04\x22\x4d\x18", 4)) return "lz4";
  if (starts_with(bytes, "\x1f\x9d", 2)) return "compress (.Z)";
  if (starts_with(bytes, "LZIP", 4)) return "lzip";
  return nullptr;
}

std::unique_ptr<InputSource> open_decoder(std::unique_ptr<FdReader> fd, std::string name) {
  const std::string magic = fd->peek(6);
  const char* f = compressed_format(magic);
  if (f == nullptr) return nullptr;
  const std::string format = f;
  if (format == "zstd")
    return std::make_unique<CheckedSource>(std::make_unique<ZstdSource>(std::move(fd), name), "zstd");
  if (format == "bzip2")
    return std::make_unique<CheckedSource>(std::make_unique<Bzip2Source>(std::move(fd), name), "bzip2");
  if (format == "xz")
    return std::make_unique<CheckedSource>(std::make_unique<XzSource>(std::move(fd), name), "xz");
  if (format == "gzip") return nullptr;  // the caller's own reader
  throw IoError(name + ": " + format +
                " data, which lepus does not read: decompress it first (gzip, zstd, bzip2 "
                "and xz are read as they are)");
}

std::unique_ptr<InputSource> check_decoded(std::unique_ptr<InputSource> inner, const char* outer) {
  return std::make_unique<CheckedSource>(std::move(inner), outer);
}

}  // namespace lepus
