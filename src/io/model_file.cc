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

namespace {

void put_header(ModelWriter& w, const std::vector<SavedOption>& options) {
  w.put_raw(kMagic, sizeof kMagic);
  w.put_u32(kModelFormatVersion);
  w.put_string(LEPUS_VERSION);
  w.put_u64(options.size());
  for (const auto& o : options) {
    w.put_string(o.name);
    w.put_string(o.value);
    w.put_u8(o.given ? 1 : 0);
  }
}

}  // namespace

std::vector<uint8_t> model_bytes(const std::vector<SavedOption>& options, const std::vector<uint8_t>& state) {
  ModelWriter w;
  put_header(w, options);
  w.put_u32(kSectionLearner);
  w.put_u32(1);
  w.put_u64(state.size());
  w.put_raw(state.data(), state.size());
  w.put_u32(0);
  std::vector<uint8_t> bytes = w.bytes();
  const uint32_t crc = crc_of(bytes.data(), bytes.size());
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  bytes.insert(bytes.end(), c, c + 4);
  return bytes;
}

ModelFileWriter::ModelFileWriter(const std::string& path, const std::vector<SavedOption>& options)
    : path_(path), target_(path), writer_([this](const uint8_t* p, size_t n) { emit(p, n); }) {
  // A symbolic link stays: the file it names is replaced.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) target_ = buf;
  }
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory, cannot write the model there");
  if (!exists || S_ISREG(st.st_mode)) {
    tmp_ = temp_name_for(target_);
    register_temp_file(tmp_);  // a fatal signal removes it
    fd_ = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      const int e = errno;
      unregister_temp_file(tmp_);
      throw IoError(path + ": cannot create a temporary model file in " + folder_of(target_) + ": " +
                    std::strerror(e));
    }
  }  // else a device, FIFO or socket (/dev/null): written through at commit(), never replaced
  put_header(writer_, options);
}

ModelFileWriter::~ModelFileWriter() {
  if (committed_) return;
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
    unregister_temp_file(tmp_);
  }
}

void ModelFileWriter::emit(const uint8_t* p, size_t n) {
  if (fd_ >= 0) {
    write_all(fd_, p, n, path_);
  } else {
    memory_.insert(memory_.end(), p, p + n);
  }
  offset_ += n;
}

void ModelFileWriter::begin_section(uint32_t tag, uint32_t version) {
  writer_.put_u32(tag);
  writer_.put_u32(version);
  writer_.flush();
  section_length_at_ = offset_;
  writer_.put_u64(0);  // the length, patched by end_section()
  writer_.flush();
}

void ModelFileWriter::end_section() {
  writer_.flush();
  const uint64_t length = offset_ - section_length_at_ - 8;
  if (fd_ >= 0) {
    if (::pwrite(fd_, &length, 8, static_cast<off_t>(section_length_at_)) != 8)
      throw IoError(path_ + ": cannot write model: " + std::strerror(errno));
  } else {
    std::memcpy(memory_.data() + section_length_at_, &length, 8);
  }
}

void ModelFileWriter::commit() {
  writer_.put_u32(0);  // end of sections
  writer_.flush();
  // The checksum covers every byte, patched lengths included: read the file back (from the page cache).
  uLong crc = crc32(0L, Z_NULL, 0);
  if (fd_ >= 0) {
    std::vector<uint8_t> buf(size_t{1} << 20);
    uint64_t at = 0;
    while (at < offset_) {
      const ssize_t got =
          ::pread(fd_, buf.data(), std::min<uint64_t>(buf.size(), offset_ - at), static_cast<off_t>(at));
      if (got <= 0)
        throw IoError(path_ + ": cannot read back the model being written: " + std::strerror(errno));
      crc = crc32(crc, buf.data(), static_cast<uInt>(got));
      at += static_cast<uint64_t>(got);
    }
  } else {
    crc = crc_of(memory_.data(), memory_.size());
  }
  const uint32_t c = static_cast<uint32_t>(crc);
  if (fd_ < 0) {
    memory_.insert(memory_.end(), reinterpret_cast<const uint8_t*>(&c),
                   reinterpret_cast<const uint8_t*>(&c) + 4);
    const int out = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (out < 0) throw IoError(path_ + ": cannot write model: " + std::strerror(errno));
    try {
      write_all(out, memory_.data(), memory_.size(), path_);
    } catch (...) {
      ::close(out);
      throw;
    }
    ::close(out);
    committed_ = true;
    return;
  }
  emit(reinterpret_cast<const uint8_t*>(&c), 4);
  if (::fchmod(fd_, mode_for_replacing(target_)) != 0 ||
      ::fsync(fd_) != 0)  // the old file's mode, or the umask's
    throw IoError(path_ + ": cannot flush model: " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp_.c_str());
    unregister_temp_file(tmp_);
    committed_ = true;
    throw IoError(path_ + ": cannot write model: " + std::strerror(e));
  }
  unregister_temp_file(tmp_);
  committed_ = true;
  const int dfd = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);  // make the rename itself durable
    ::close(dfd);
  }
}

void write_model_file(const std::string& path, const std::vector<SavedOption>& options,
                      const std::vector<uint8_t>& state) {
  ModelFileWriter f(path, options);
  f.begin_section(kSectionLearner, 1);
  f.writer().put_raw(state.data(), state.size());
  f.end_section();
  f.commit();
}

void save_model(const std::string& path, const std::vector<SavedOption>& options, const FeatureSpace& space,
                const Learner& learner, bool predict_only) {
  ModelFileWriter f(path, options);
  f.begin_section(kSectionFeatureSpace, 1);
  space.save(f.writer());
  f.end_section();
  f.begin_section(kSectionLearner, 1);
  if (predict_only) {
    save_for_prediction(learner, f.writer());
  } else {
    learner.save(f.writer());
  }
  f.end_section();
  if (f.writer().nonfinite() > 0)  // the temporary file is abandoned: the previous model stays
    throw IoError(
        path + ": not saved: the " + std::string(learner.name()) + " state holds " +
        std::to_string(f.writer().nonfinite()) +
        " non-finite values (a numeric overflow), which no model may hold; the previous file is as it was");
  f.commit();
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
  if (m.format_version != 1 && m.format_version != kModelFormatVersion)
    throw ModelFormatError(source + ": lepus model format version " + std::to_string(m.format_version) +
                           ", this lepus (" LEPUS_VERSION ") reads versions 1 to " +
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
  if (m.format_version == 1) {  // one state holding the feature space's and the learner's
    const uint64_t size = r.get_u64("state size");
    if (size != r.remaining()) throw ModelFormatError(source + ": damaged lepus model: state size mismatch");
    m.state.resize(size);
    r.get_raw(m.state.data(), size, "learner state");
    return m;
  }
  // Version 2: tagged, versioned sections in order, each bounded by the bytes present.
  for (uint32_t expected_min = 0;;) {
    const uint32_t tag = r.get_u32("section tag");
    if (tag == 0) break;
    const uint32_t version = r.get_u32("section version");
    const uint64_t length = r.get_u64("section length");
    if (length > r.remaining())
      throw ModelFormatError(source + ": damaged lepus model: a section runs past the end");
    const uint32_t order = tag == kSectionFeatureSpace ? 1 : tag == kSectionLearner ? 2 : 0;
    if (order == 0)
      throw ModelFormatError(source +
                             ": unknown model section (made by a newer lepus?); this lepus (" LEPUS_VERSION
                             ") reads the feature space and learner sections");
    if (order <= expected_min)
      throw ModelFormatError(source + ": damaged lepus model: sections out of order");
    if (version != 1)
      throw ModelFormatError(source + ": model section version " + std::to_string(version) +
                             ", this lepus (" + LEPUS_VERSION + ") reads version 1");
    expected_min = order;
    const size_t at = m.state.size();
    m.state.resize(at + length);
    r.get_raw(m.state.data() + at, length, "section");
  }
  if (r.remaining() != 0)
    throw ModelFormatError(source + ": damaged lepus model: bytes after the last section");
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
