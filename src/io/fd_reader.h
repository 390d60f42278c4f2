// A file descriptor read with a little look-ahead (the magic bytes that tell gzip from plain text), shared
// by the plain source and the gzip reader.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace lepus {

class FdReader {
 public:
  FdReader(int fd, bool owns, std::string name);
  ~FdReader();
  FdReader(const FdReader&) = delete;
  FdReader& operator=(const FdReader&) = delete;

  // Opens path ("" or "-": stdin). Throws IoError if the file cannot be opened or is a directory.
  static std::unique_ptr<FdReader> open(const std::string& path);

  // Reads at most n bytes: the look-ahead first, else one read(2) (retried on EINTR). 0 only at the end.
  // Throws IoError when the read fails.
  size_t read(char* buf, size_t n);
  // Fills the look-ahead with up to k bytes (several reads if a pipe delivers them slowly).
  const std::string& peek(size_t k);

  int fd() const { return fd_; }
  // Whether look-ahead bytes are waiting: the next read returns without touching the descriptor.
  bool buffered() const { return peek_pos_ < peek_.size(); }
  // A regular file: a read never waits for a writer (unlike a pipe, a terminal or a socket).
  bool regular() const { return regular_; }
  const std::string& name() const { return name_; }

 private:
  int fd_;
  bool owns_;
  bool regular_ = false;
  std::string name_;
  std::string peek_;
  size_t peek_pos_ = 0;
};

}  // namespace lepus
