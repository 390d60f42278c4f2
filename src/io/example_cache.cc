#include "io/example_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/safe_files.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr char kCacheMagic[8] = {'L', 'E', 'P', 'U', 'S', 'C', 'A', 'C'};
constexpr char kCacheEnd[8] = {'L', 'E', 'P', 'U', 'S', 'E', 'N', 'D'};
constexpr uint32_t kTrailerMark = 0xFFFFFFFFu;
constexpr size_t kTrailerSize = 4 + 8 + 4 + 8;

template <typename T>
void put(std::vector<char>& out, T v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}
template <typename T>
T get(const char*& p, const char* end, const std::string& source) {
  if (static_cast<size_t>(end - p) < sizeof(T)) throw IoError(source + ": malformed cache record");
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

uint32_t crc_update(uint32_t crc, const char* data, size_t n) {
  return static_cast<uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

}  // namespace

void encode_cache_record(const Example& ex, std::vector<char>& out) {
  const size_t start = out.size();
  put<uint32_t>(out, 0);  // length, patched below
  put<uint64_t>(out, ex.line);
  put<uint8_t>(out, ex.labeled ? 1 : 0);
  put<uint8_t>(out, static_cast<uint8_t>(ex.label_kind));
  put<float>(out, ex.label);
  put<float>(out, ex.weight);
  put<float>(out, ex.initial);
  if (ex.label_kind != LabelKind::kScalar) {
    put<uint32_t>(out, static_cast<uint32_t>(ex.classes.size()));
    for (const ClassCost& c : ex.classes) {
      put<uint32_t>(out, c.klass);
      put<float>(out, c.cost);
    }
  }
  put<uint32_t>(out, static_cast<uint32_t>(ex.tag.size()));
  out.insert(out.end(), ex.tag.begin(), ex.tag.end());
  put<uint16_t>(out, static_cast<uint16_t>(ex.groups.size()));
  for (const auto& g : ex.groups) {
    put<uint8_t>(out, g.ns);
    put<uint32_t>(out, g.end - g.begin);
  }
  for (uint32_t i = 0; i < ex.num_linear; ++i) {
    put<uint64_t>(out, ex.features[i].index);
    put<float>(out, ex.features[i].value);
  }
  const uint32_t len = static_cast<uint32_t>(out.size() - start - 4);
  std::memcpy(out.data() + start, &len, 4);
}

const char* decode_cache_record(const char* p, const char* end, Example& ex, const std::string& source) {
  const uint32_t len = get<uint32_t>(p, end, source);
  if (static_cast<size_t>(end - p) < len) throw IoError(source + ": malformed cache record");
  const char* rec_end = p + len;
  ex.clear();
  ex.line = get<uint64_t>(p, rec_end, source);
  ex.labeled = get<uint8_t>(p, rec_end, source) != 0;
  const uint8_t kind = get<uint8_t>(p, rec_end, source);
  if (kind > static_cast<uint8_t>(LabelKind::kCostSensitive))
    throw IoError(source + ": malformed cache record");
  ex.label_kind = static_cast<LabelKind>(kind);
  ex.label = get<float>(p, rec_end, source);
  ex.weight = get<float>(p, rec_end, source);
  ex.initial = get<float>(p, rec_end, source);
  if (ex.label_kind != LabelKind::kScalar) {
    const uint32_t nclasses = get<uint32_t>(p, rec_end, source);
    // Bounded by the bytes present before anything is allocated: a damaged count must not reserve gigabytes.
    if (nclasses > static_cast<size_t>(rec_end - p) / 8) throw IoError(source + ": malformed cache record");
    ex.classes.resize(nclasses);
    for (ClassCost& c : ex.classes) {
      std::memcpy(&c.klass, p, 4);
      std::memcpy(&c.cost, p + 4, 4);
      p += 8;
    }
  }
  const uint32_t tag_len = get<uint32_t>(p, rec_end, source);
  if (static_cast<size_t>(rec_end - p) < tag_len) throw IoError(source + ": malformed cache record");
  ex.tag.assign(p, tag_len);
  p += tag_len;
  const uint16_t ngroups = get<uint16_t>(p, rec_end, source);
  uint64_t total = 0;  // 64-bit: group counts summed in 32 bits could wrap (found by fuzzing)
  for (uint16_t g = 0; g < ngroups; ++g) {
    const uint8_t ns = get<uint8_t>(p, rec_end, source);
    const uint32_t count = get<uint32_t>(p, rec_end, source);
    if (total + count > static_cast<uint64_t>(rec_end - p) / 12)
      throw IoError(source + ": malformed cache record");
    ex.groups.push_back(FeatureGroup{ns, static_cast<uint32_t>(total), static_cast<uint32_t>(total + count)});
    total += count;
  }
  if (static_cast<uint64_t>(rec_end - p) != total * 12) throw IoError(source + ": malformed cache record");
  ex.features.resize(total);
  for (uint32_t i = 0; i < total; ++i) {
    std::memcpy(&ex.features[i].index, p, 8);
    std::memcpy(&ex.features[i].value, p + 8, 4);
    p += 12;
  }
  ex.num_linear = total;
  return rec_end;
}

namespace {

// A CRC-32 of a regular file's content: all of it up to 64 MiB (any change is seen); past that its first and
// last MiB and 256 blocks of 4 KiB evenly spread between (a few MiB read, however large the file: a change
// confined to bytes between the blocks can escape it, as it could escape size and time). "" when the file
// cannot be read.
std::string content_digest(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::vector<unsigned char> buf(size_t{1} << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  auto take = [&](uint64_t at, uint64_t n) {
    while (n > 0) {
      const ssize_t got = ::pread(fd, buf.data(), std::min<uint64_t>(n, buf.size()), static_cast<off_t>(at));
      if (got <= 0) return false;
      crc = crc32(crc, buf.data(), static_cast<uInt>(got));
      at += static_cast<uint64_t>(got);
      n -= static_cast<uint64_t>(got);
    }
    return true;
  };
  constexpr uint64_t kWhole = uint64_t{64} << 20, kEnd = uint64_t{1} << 20, kBlock = 4096, kBlocks = 256;
  bool ok = true;
  if (size <= kWhole) {
    ok = take(0, size);
  } else {
    ok = take(0, kEnd) && take(size - kEnd, kEnd);
    const uint64_t span = size - 2 * kEnd - kBlock;
    for (uint64_t k = 0; ok && k < kBlocks; ++k) ok = take(kEnd + span / (kBlocks - 1) * k, kBlock);
  }
  ::close(fd);
  return ok ? std::to_string(crc) : "";
}

}  // namespace

std::string cache_fingerprint(const std::vector<std::string>& data_paths,
                              const std::string& parse_options_text) {
  std::string fp;
  for (const auto& path : data_paths) {
    fp += (fp.empty() ? "data=" : ";data=") + path;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      fp += ";size=" + std::to_string(st.st_size) + ";mtime=" + std::to_string(st.st_mtim.tv_sec) + "." +
            std::to_string(st.st_mtim.tv_nsec);
      // The content too: a copy made with cp -p, rsync -t or touch -r keeps size and time with other labels.
      if (S_ISREG(st.st_mode)) fp += ";crc=" + content_digest(path, static_cast<uint64_t>(st.st_size));
    }
  }
  if (data_paths.empty()) fp = "data=";
  return fp + ";" + parse_options_text;
}

// ---- the cache file's bytes: plain stdio, or gzip through zlib (--compressed) ----

CacheFile::~CacheFile() { close(); }

bool CacheFile::open_read(const std::string& path) {
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) return false;
  unsigned char magic[2] = {0, 0};
  const size_t n = std::fread(magic, 1, 2, f_);
  if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {  // gzip: read through zlib
    std::fclose(f_);
    f_ = nullptr;
    gz_ = gzopen(path.c_str(), "rb");
    if (!gz_) return false;
    gzbuffer(gz_, 1 << 18);
    return true;
  }
  std::rewind(f_);
  return true;
}

bool CacheFile::open_write(const std::string& path, bool compressed) {
  if (compressed) {
    gz_ = gzopen(path.c_str(), "wb1");
    if (gz_) gzbuffer(gz_, 1 << 18);
    return gz_ != nullptr;
  }
  f_ = std::fopen(path.c_str(), "wb");
  return f_ != nullptr;
}

size_t CacheFile::read(void* buf, size_t n, bool* error) {
  if (gz_) {
    size_t got = 0;
    while (got < n) {  // gzread takes an unsigned count
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
      const int r = gzread(gz_, static_cast<char*>(buf) + got, chunk);
      if (r < 0) {
        *error = true;
        return got;
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }
  const size_t got = std::fread(buf, 1, n, f_);
  if (got < n && std::ferror(f_)) *error = true;
  return got;
}

bool CacheFile::write(const void* buf, size_t n) {
  if (gz_) return n == 0 || gzwrite(gz_, buf, static_cast<unsigned>(n)) == static_cast<int>(n);
  return std::fwrite(buf, 1, n, f_) == n;
}

bool CacheFile::seek(uint64_t pos) {
  if (gz_) return gzseek(gz_, static_cast<z_off_t>(pos), SEEK_SET) == static_cast<z_off_t>(pos);
  return std::fseek(f_, static_cast<long>(pos), SEEK_SET) == 0;
}

bool CacheFile::close() {
  bool ok = true;
  if (gz_) ok = gzclose(gz_) == Z_OK;
  if (f_) {
    ok = std::fflush(f_) == 0 && ok;
    ok = std::fclose(f_) == 0 && ok;
  }
  gz_ = nullptr;
  f_ = nullptr;
  return ok;
}

CacheWriter::CacheWriter(std::string path, const std::string& fingerprint, bool compressed)
    : path_(std::move(path)) {
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw IoError(path_ + ": a cache file must be a regular file (it is written, renamed and read back)");
  tmp_ = temp_name_for(path_);
  register_temp_file(tmp_);  // a fatal signal removes it
  if (!file_.open_write(tmp_, compressed)) {
    unregister_temp_file(tmp_);
    throw IoError(path_ + ": cannot create cache file: " + std::strerror(errno));
  }
  buf_.insert(buf_.end(), kCacheMagic, kCacheMagic + 8);
  put<uint32_t>(buf_, kCacheVersion);
  put<uint64_t>(buf_, fingerprint.size());
  buf_.insert(buf_.end(), fingerprint.begin(), fingerprint.end());
  flush_buffer();
  crc_ = crc_update(0, nullptr, 0);
}

CacheWriter::~CacheWriter() {
  file_.close();
  if (!done_) ::unlink(tmp_.c_str());
  unregister_temp_file(tmp_);
}

void CacheWriter::append(const Example& ex) {
  const size_t before = buf_.size();
  encode_cache_record(ex, buf_);
  crc_ = crc_update(crc_, buf_.data() + before, buf_.size() - before);
  ++records_;
  if (buf_.size() >= (1u << 20)) flush_buffer();
}

void CacheWriter::flush_buffer() {
  if (!buf_.empty() && !file_.write(buf_.data(), buf_.size()))
    throw IoError(path_ + ": cannot write cache file: " + std::strerror(errno));
  buf_.clear();
}

void CacheWriter::finish() {
  put<uint32_t>(buf_, kTrailerMark);
  put<uint64_t>(buf_, records_);
  put<uint32_t>(buf_, crc_);
  buf_.insert(buf_.end(), kCacheEnd, kCacheEnd + 8);
  flush_buffer();
  if (!file_.close()) throw IoError(path_ + ": cannot write cache file: " + std::strerror(errno));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw IoError(path_ + ": cannot write cache file: " + std::strerror(errno));
  done_ = true;
}

std::unique_ptr<CacheReader> CacheReader::open(const std::string& path, const std::string& fingerprint,
                                               std::string* why, bool suffix_only) {
  std::unique_ptr<CacheReader> r(new CacheReader());
  r->path_ = path;
  if (!r->file_.open_read(path)) {
    *why = "no cache file";
    return nullptr;
  }
  bool error = false;
  char head[12];
  uint64_t fp_len = 0;
  if (r->file_.read(head, 12, &error) != 12 || std::memcmp(head, kCacheMagic, 8) != 0) {
    *why = error ? "damaged cache" : "not a lepus cache";
    return nullptr;
  }
  uint32_t version;
  std::memcpy(&version, head + 8, 4);
  if (version != kCacheVersion) {
    *why = "cache format version " + std::to_string(version);
    return nullptr;
  }
  if (r->file_.read(&fp_len, 8, &error) != 8 || fp_len > (1u << 20)) {
    *why = "damaged cache header";
    return nullptr;
  }
  std::string fp(fp_len, '\0');
  const bool complete = r->file_.read(fp.data(), fp_len, &error) == fp_len;
  const bool match =
      suffix_only ? fp.size() >= fingerprint.size() &&
                        fp.compare(fp.size() - fingerprint.size(), fingerprint.size(), fingerprint) == 0
                  : fp == fingerprint;
  if (!complete || !match) {
    *why = "cache made from other data or options";
    return nullptr;
  }
  r->data_begin_ = 12 + 8 + fp_len;
  // Verify every record byte before any is used, in one streaming read (a gzip cache cannot seek to its end):
  // all bytes but the last kTrailerSize are records, those are the trailer.
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<char> buf(kChunk + kTrailerSize);
  size_t held = 0;
  uint64_t records_bytes = 0;
  uint32_t actual = crc_update(0, nullptr, 0);
  for (;;) {
    const size_t n = r->file_.read(buf.data() + held, kChunk, &error);
    if (error) {
      *why = "unreadable or damaged cache";
      return nullptr;
    }
    if (n == 0) break;
    held += n;
    if (held > kTrailerSize) {
      const size_t body = held - kTrailerSize;
      actual = crc_update(actual, buf.data(), body);
      records_bytes += body;
      std::memmove(buf.data(), buf.data() + body, kTrailerSize);
      held = kTrailerSize;
    }
  }
  uint32_t mark = 0, crc = 0;
  if (held != kTrailerSize || (std::memcpy(&mark, buf.data(), 4), mark != kTrailerMark) ||
      std::memcmp(buf.data() + 16, kCacheEnd, 8) != 0) {
    *why = "truncated cache";
    return nullptr;
  }
  std::memcpy(&crc, buf.data() + 12, 4);
  if (actual != crc) {
    *why = "damaged cache (checksum mismatch)";
    return nullptr;
  }
  r->data_end_ = r->data_begin_ + records_bytes;
  r->rewind();
  return r;
}

CacheReader::~CacheReader() = default;

void CacheReader::rewind() {
  if (!file_.seek(data_begin_)) throw IoError(path_ + ": cannot read cache");
  pos_ = data_begin_;
  carry_.clear();
}

bool CacheReader::next_block(ByteBuffer& out, size_t block_size) {
  out.clear();
  out.swap(carry_);
  for (;;) {
    // Whole records already buffered?
    size_t whole = 0;
    while (out.size() - whole >= 4) {
      uint32_t len;
      std::memcpy(&len, out.data() + whole, 4);
      if (out.size() - whole - 4 < len) break;
      whole += 4 + len;
    }
    if ((whole > 0 && out.size() >= block_size) || pos_ >= data_end_) {
      if (whole < out.size() && pos_ >= data_end_)
        throw IoError(path_ + ": malformed cache (partial record)");
      carry_.assign(out.begin() + static_cast<long>(whole), out.end());
      out.resize(whole);
      return whole > 0;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(data_end_ - pos_, block_size));
    const size_t old = out.size();
    out.resize(old + n);
    bool error = false;
    if (file_.read(out.data() + old, n, &error) != n) throw IoError(path_ + ": cannot read cache");
    pos_ += n;
  }
}

}  // namespace lepus
