// File/stdin sources; gzip (any number of concatenated members) is inflated with zlib.
#include "io/input_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "lepus/errors.h"

#ifdef LEPUS_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace lepus {
namespace {

// Reads a descriptor, with up to two bytes of look-ahead already consumed for magic detection.
class FdReader {
 public:
  FdReader(int fd, bool owns, std::string name) : fd_(fd), owns_(owns), name_(std::move(name)) {}
  ~FdReader() {
    if (owns_) ::close(fd_);
  }
  size_t read(char* buf, size_t n) {
    if (n == 0) return 0;
    if (peek_pos_ < peek_.size()) {
      const size_t k = std::min(n, peek_.size() - peek_pos_);
      std::memcpy(buf, peek_.data() + peek_pos_, k);
      peek_pos_ += k;
      return k;
    }
    for (;;) {
      const ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno == EINTR) continue;
      throw IoError(name_ + ": read failed: " + std::strerror(errno));
    }
  }
  // Fills the look-ahead with up to k bytes (several reads if a pipe delivers them slowly).
  const std::string& peek(size_t k) {
    while (peek_.size() < k) {
      char c[8];
      const ssize_t got = ::read(fd_, c, k - peek_.size());
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        throw IoError(name_ + ": read failed: " + std::strerror(errno));
      }
      peek_.append(c, static_cast<size_t>(got));
    }
    return peek_;
  }

 private:
  int fd_;
  bool owns_;
  std::string name_;
  std::string peek_;
  size_t peek_pos_ = 0;
};

class PlainSource final : public InputSource {
 public:
  PlainSource(std::unique_ptr<FdReader> fd, std::string name) : fd_(std::move(fd)) { name_ = std::move(name); }
  size_t read(char* buf, size_t n) override { return fd_->read(buf, n); }

 private:
  std::unique_ptr<FdReader> fd_;
};

class GzipSource final : public InputSource {
 public:
  GzipSource(std::unique_ptr<FdReader> fd, std::string name) : fd_(std::move(fd)), in_(1 << 18) {
    name_ = std::move(name);
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw IoError(name_ + ": cannot initialise zlib");
  }
  ~GzipSource() override { inflateEnd(&zs_); }

  size_t read(char* buf, size_t n) override {
    if (!pending_error_.empty()) throw CorruptInputError(pending_error_);
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    const size_t want = zs_.avail_out;
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0) {
        if (zs_.avail_out < want) break;  // return what is inflated rather than block for more input
        if (eof_) {
          if (mid_member_) return fail(want - zs_.avail_out, ": unexpected end of gzip data (truncated file)");
          return 0;
        }
        const size_t got = fd_->read(reinterpret_cast<char*>(in_.data()), in_.size());
        if (got == 0) {
          eof_ = true;
          continue;
        }
        zs_.next_in = in_.data();
        zs_.avail_in = static_cast<uInt>(got);
      }
      mid_member_ = true;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        mid_member_ = false;
        inflateReset(&zs_);  // a following member (concatenated gzip) starts a new stream
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input
      if (rc != Z_OK)
        return fail(want - zs_.avail_out,
                    std::string(": corrupt gzip data (") + (zs_.msg ? zs_.msg : "zlib error") + ")");
    }
    return want - zs_.avail_out;
  }

 private:
  // Damage is reported after the bytes inflated before it have been handed out.
  size_t fail(size_t produced, const std::string& what) {
    pending_error_ = name_ + what;
    if (produced > 0) return produced;
    throw CorruptInputError(pending_error_);
  }
  std::unique_ptr<FdReader> fd_;
  std::vector<unsigned char> in_;
  std::string pending_error_;
  z_stream zs_;
  bool eof_ = false;
  bool mid_member_ = false;
};

#ifdef LEPUS_HAVE_ISAL
// The same contract with ISA-L's igzip inflater (same bytes out as zlib, several times faster).
class IsalGzipSource final : public InputSource {
 public:
  IsalGzipSource(std::unique_ptr<FdReader> fd, std::string name) : fd_(std::move(fd)), in_(1 << 18) {
    name_ = std::move(name);
    isal_inflate_init(&st_);
    st_.crc_flag = ISAL_GZIP;
  }

  size_t read(char* buf, size_t n) override {
    if (!pending_error_.empty()) throw CorruptInputError(pending_error_);
    st_.next_out = reinterpret_cast<uint8_t*>(buf);
    st_.avail_out = static_cast<uint32_t>(std::min<size_t>(n, 1u << 30));
    const uint32_t want = st_.avail_out;
    while (st_.avail_out > 0) {
      if (st_.block_state == ISAL_BLOCK_FINISH) mid_member_ = false;
      if (st_.avail_in == 0) {
        if (st_.avail_out < want) break;  // return what is inflated rather than block for more input
        if (eof_) {
          if (mid_member_) return fail(want - st_.avail_out, ": unexpected end of gzip data (truncated file)");
          return 0;
        }
        const size_t got = fd_->read(reinterpret_cast<char*>(in_.data()), in_.size());
        if (got == 0) {
          eof_ = true;
          continue;
        }
        st_.next_in = in_.data();
        st_.avail_in = static_cast<uint32_t>(got);
      }
      if (st_.block_state == ISAL_BLOCK_FINISH) {  // a following member (concatenated gzip)
        isal_inflate_reset(&st_);
        st_.crc_flag = ISAL_GZIP;
      }
      mid_member_ = true;
      const int rc = isal_inflate(&st_);
      if (rc < 0)
        return fail(want - st_.avail_out,
                    std::string(": corrupt gzip data (") +
                        (rc == ISAL_INCORRECT_CHECKSUM ? std::string("checksum mismatch")
                                                       : "igzip error " + std::to_string(rc)) +
                        ")");
    }
    return want - st_.avail_out;
  }

 private:
  size_t fail(size_t produced, const std::string& what) {
    pending_error_ = name_ + what;
    if (produced > 0) return produced;
    throw CorruptInputError(pending_error_);
  }
  std::unique_ptr<FdReader> fd_;
  std::vector<uint8_t> in_;
  std::string pending_error_;
  inflate_state st_;
  bool eof_ = false;
  bool mid_member_ = false;
};
#endif

}  // namespace

bool InputSource::have_isal() {
#ifdef LEPUS_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<InputSource> InputSource::open(const std::string& path, Gzip gzip) {
  std::unique_ptr<FdReader> fd;
  std::string name;
  if (path.empty() || path == "-") {
    fd = std::make_unique<FdReader>(0, false, "stdin");
    name = "stdin";
  } else {
    const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f < 0) throw IoError(path + ": cannot open data file: " + std::strerror(errno));
    struct stat st;
    if (::fstat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(f);
      throw IoError(path + ": is a directory, not a data file");
    }
    fd = std::make_unique<FdReader>(f, true, path);
    name = path;
  }
  const std::string& magic = fd->peek(2);
  if (magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
#ifdef LEPUS_HAVE_ISAL
    if (gzip != Gzip::kZlib) return std::make_unique<IsalGzipSource>(std::move(fd), name);
#endif
    if (gzip == Gzip::kIsal) throw IoError("this lepus was built without ISA-L");
    return std::make_unique<GzipSource>(std::move(fd), name);
  }
  return std::make_unique<PlainSource>(std::move(fd), name);
}

}  // namespace lepus
