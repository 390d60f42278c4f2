// File/stdin sources. Plain data is read as it is; gzip (recognised by its magic bytes, any number of
// concatenated members) goes through GzipReader, which inflates on threads of its own (io/gzip_reader.h).
#include "io/input_source.h"

#include "io/fd_reader.h"
#include "io/gzip_reader.h"
#include "io/stream_decoders.h"

namespace lepus {
namespace {

class PlainSource final : public InputSource {
 public:
  PlainSource(std::unique_ptr<FdReader> fd, std::string name) : fd_(std::move(fd)) {
    name_ = std::move(name);
  }
  size_t read(char* buf, size_t n) override { return fd_->read(buf, n); }

 private:
  std::unique_ptr<FdReader> fd_;
};

}  // namespace

bool InputSource::have_isal() { return MemberInflater::have_isal_backend(); }

std::unique_ptr<InputSource> InputSource::open(const std::string& path, Gzip gzip) {
  GzipReaderOptions options;
  options.backend = gzip == Gzip::kZlib                  ? GzipBackend::kZlib
                    : gzip == Gzip::kIsal || have_isal() ? GzipBackend::kIsal
                                                         : GzipBackend::kZlib;
  std::unique_ptr<InputSource> s = open_input(path, options);
  if (dynamic_cast<GzipReader*>(s.get()) != nullptr)
    return check_decoded(std::move(s), "gzip");  // gzip in gzip
  return s;
}

std::unique_ptr<InputSource> open_input(const std::string& path, const GzipReaderOptions& options) {
  auto fd = FdReader::open(path);
  std::string name = fd->name();
  const std::string magic = fd->peek(6);
  if (magic.size() >= 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b)
    return std::make_unique<GzipReader>(std::move(fd), std::move(name), options);
  if (compressed_format(magic) != nullptr) return open_decoder(std::move(fd), std::move(name));
  return std::make_unique<PlainSource>(std::move(fd), std::move(name));
}

}  // namespace lepus
