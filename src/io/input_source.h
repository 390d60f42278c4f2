// Byte sources: a file or stdin, plain or compressed (gzip, zstd, bzip2, xz: recognised by their magic bytes,
// whatever the name; BGZF is inflated on several threads).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace lepus {

class InputSource {
 public:
  virtual ~InputSource() = default;
  // Reads at most n bytes into buf; returns 0 only at the end. Waits only while no byte is ready, so a pipe
  // that delivers one line yields that line at once: a plain source makes at most one read(2); a gzip
  // source hands out what its inflate thread has inflated so far (io/gzip_reader.h).
  virtual size_t read(char* buf, size_t n) = 0;
  const std::string& name() const { return name_; }
  // Whether one thread of the source's own is busy for as long as the input lasts: a gzip file that is not
  // BGZF, inflated as one stream (the pipeline then gives the parsers one thread less).
  virtual bool inflates_alone() const { return false; }

  // Which inflater reads gzip input: ISA-L's igzip when lepus was built with it (faster), else zlib.
  enum class Gzip { kAuto, kZlib, kIsal };
  static bool have_isal();

  // path "" or "-" means stdin. Throws IoError if the file cannot be opened or is a directory.
  static std::unique_ptr<InputSource> open(const std::string& path, Gzip gzip = Gzip::kAuto);

 protected:
  std::string name_;
};

}  // namespace lepus
