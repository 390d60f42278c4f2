#include "io/fd_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lepus/errors.h"

namespace lepus {

FdReader::FdReader(int fd, bool owns, std::string name) : fd_(fd), owns_(owns), name_(std::move(name)) {
  struct stat st;
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

FdReader::~FdReader() {
  if (owns_) ::close(fd_);
}

std::unique_ptr<FdReader> FdReader::open(const std::string& path) {
  if (path.empty() || path == "-") return std::make_unique<FdReader>(0, false, "stdin");
  const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f < 0) throw IoError(path + ": cannot open data file: " + std::strerror(errno));
  struct stat st;
  if (::fstat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(f);
    throw IoError(path + ": is a directory, not a data file");
  }
  return std::make_unique<FdReader>(f, true, path);
}

size_t FdReader::read(char* buf, size_t n) {
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

const std::string& FdReader::peek(size_t k) {
  while (peek_.size() < k) {
    char c[8];
    const ssize_t got = ::read(fd_, c, std::min(sizeof c, k - peek_.size()));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(name_ + ": read failed: " + std::strerror(errno));
    }
    peek_.append(c, static_cast<size_t>(got));
  }
  return peek_;
}

}  // namespace lepus
