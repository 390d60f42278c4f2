#include "io/model_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "io/safe_files.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr char kMagic[8] = {'L', 'E', 'P', 'U', 'S', 'M', 'D', 'L'};

uint32_t crc_of(const uint8_t* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

// VW's binary models open with a u32 length and the version text ("9.11.2\0").
bool looks_like_vw_model(const std::vector<uint8_t>& b, std::string& version) {
  if (b.size() < 8) return false;
  uint32_t n;
  std::memcpy(&n, b.data(), 4);
  if (n < 2 || n > 32 || b.size() < 4 + n || b[3 + n] != 0) return false;
  for (uint32_t i = 0; i + 1 < n; ++i) {
    const uint8_t c = b[4 + i];
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  version.assign(reinterpret_cast<const char*>(b.data() + 4), n - 1);
  return true;
}

void write_all(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw IoError(path + ": cannot write model: " + std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

std::vector<uint8_t> model_bytes(const std::vector<SavedOption>& options, const std::vector<uint8_t>& state) {
  ModelWriter w;
  w.put_raw(kMagic, sizeof kMagic);
  w.put_u32(kModelFormatVersion);
  w.put_string(LEPUS_VERSION);
  w.put_u64(options.size());
  for (const auto& o : options) {
    w.put_string(o.name);
    w.put_string(o.value);
    w.put_u8(o.given ? 1 : 0);
  }
  w.put_u64(state.size());
  w.put_raw(state.data(), state.size());
  std::vector<uint8_t> bytes = w.bytes();
  const uint32_t crc = crc_of(bytes.data(), bytes.size());
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  bytes.insert(bytes.end(), c, c + 4);
  return bytes;
}

void write_model_file(const std::string& path, const std::vector<SavedOption>& options,
                      const std::vector<uint8_t>& state) {
  const std::vector<uint8_t> bytes = model_bytes(options, state);
  // A symbolic link stays: the file it names is replaced.
  std::string target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) target = buf;
  }
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory, cannot write the model there");
    // A device, FIFO or socket (/dev/stdout, /dev/null) is written through, never replaced by a regular file.
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(path + ": cannot write model: " + std::strerror(errno));
    try {
      write_all(fd, bytes.data(), bytes.size(), path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const mode_t mode = mode_for_replacing(target);  // the old file's, or what the umask gives a new one
  const std::string tmp = temp_name_for(target);
  register_temp_file(tmp);  // a fatal signal removes it
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    unregister_temp_file(tmp);
    throw IoError(path + ": cannot create a temporary model file in " + dir + ": " + std::strerror(errno));
  }
  try {
    write_all(fd, bytes.data(), bytes.size(), path);
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0)
      throw IoError(path + ": cannot flush model: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    unregister_temp_file(tmp);
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    unregister_temp_file(tmp);
    throw IoError(path + ": cannot write model: " + std::strerror(e));
  }
  unregister_temp_file(tmp);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);  // make the rename itself durable
    ::close(dfd);
  }
}

void save_model(const std::string& path, const std::vector<SavedOption>& options, const FeatureSpace& space,
                const Learner& learner, bool predict_only) {
  ModelWriter w;
  space.save(w);
  if (predict_only) {
    learner.save_predict_only(w);
  } else {
    learner.save(w);
  }
  if (w.nonfinite() > 0)
    throw IoError(path + ": not saved: the " + std::string(learner.name()) + " state holds " +
                  std::to_string(w.nonfinite()) +
                  " non-finite values (a numeric overflow), which no model may hold; the previous file is as it was");
  write_model_file(path, options, w.bytes());
}

ModelFile parse_model_bytes(const std::vector<uint8_t>& b, const std::string& source) {
  std::string vw_version;
  if (b.empty()) throw ModelFormatError(source + ": not a lepus model: the file is empty");
  if (b.size() < sizeof kMagic || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) {
    if (looks_like_vw_model(b, vw_version))
      throw ModelFormatError(source + ": this is a Vowpal Wabbit model (VW " + vw_version +
                             "); lepus cannot read VW models, retrain with lepus");
    if (b.size() < sizeof kMagic && std::memcmp(b.data(), kMagic, b.size()) == 0)
      throw ModelFormatError(source + ": truncated lepus model (" + std::to_string(b.size()) + " bytes)");
    throw ModelFormatError(source + ": not a lepus model (no LEPUSMDL signature)");
  }
  if (b.size() < sizeof kMagic + 4 + 4)
    throw ModelFormatError(source + ": truncated lepus model (" + std::to_string(b.size()) + " bytes)");
  uint32_t stored;
  std::memcpy(&stored, b.data() + b.size() - 4, 4);
  if (crc_of(b.data(), b.size() - 4) != stored)
    throw ModelFormatError(source + ": damaged lepus model: checksum mismatch (truncated or modified file)");

  ModelReader r(b.data() + sizeof kMagic, b.size() - sizeof kMagic - 4, source);
  ModelFile m;
  m.format_version = r.get_u32("format version");
  if (m.format_version != kModelFormatVersion)
    throw ModelFormatError(source + ": lepus model format version " + std::to_string(m.format_version) +
                           ", this lepus (" LEPUS_VERSION ") reads version " +
                           std::to_string(kModelFormatVersion));
  m.lepus_version = r.get_string("lepus version");
  const uint64_t n = r.get_u64("option count");
  if (n > r.remaining()) throw ModelFormatError(source + ": damaged lepus model: bad option count");
  for (uint64_t i = 0; i < n; ++i) {
    SavedOption o;
    o.name = r.get_string("option name");
    o.value = r.get_string("option value");
    o.given = r.get_u8("option flag") != 0;
    m.options.push_back(std::move(o));
  }
  const uint64_t size = r.get_u64("state size");
  if (size != r.remaining()) throw ModelFormatError(source + ": damaged lepus model: state size mismatch");
  m.state.resize(size);
  r.get_raw(m.state.data(), size, "learner state");
  return m;
}

ModelFile read_model_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": cannot open model: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError(path + ": is a directory, not a model file");
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw IoError(path + ": cannot read model: " + std::strerror(e));
    }
    bytes.insert(bytes.end(), buf, buf + got);
    // Stop at the first wrong signature byte: /dev/zero, /dev/urandom or a FIFO is never read on and on.
    if (std::memcmp(bytes.data(), kMagic, std::min(bytes.size(), sizeof kMagic)) != 0) break;
  }
  ::close(fd);
  return parse_model_bytes(bytes, path);
}

}  // namespace lepus
