// The example cache (-c / --cache_file): parsed, hashed examples in binary, so passes after the first skip
// text parsing. Layout:
//   header: "LEPUSCAC" | u32 version | string fingerprint (every option that shaped the parse, and the data
//           file's size and modification time)
//   records: u32 length | u64 line | u8 labeled | u8 label kind | f32 label, weight, initial |
//            [label kind not scalar: u32 class count, each (u32 class, f32 cost)] | u32 tag length, tag |
//            u16 groups, each (u8 namespace, u32 count) | features (u64 index, f32 value)
//   trailer: u32 0xFFFFFFFF | u64 record count | u32 CRC-32 of all record bytes | "LEPUSEND"
// The label kind is Example::label_kind's value; a scalar record carries no class list (a scalar example has
// none), so it costs one byte more than in version 1, which had no label kind.
// A cache is written to a temporary file and renamed only when the pass that wrote it read all its input, so a
// half-written cache never exists under the real name. A cache whose header or trailer does not match, or whose
// checksum fails, is rebuilt, never read.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "io/byte_buffer.h"
#include "lepus/example.h"

struct gzFile_s;  // zlib's

namespace lepus {

// 2: the label kind and the classes of multiclass and cost-sensitive examples.
inline constexpr uint32_t kCacheVersion = 2;

// Appends one example's record (linear features only: interactions are expanded after reading).
void encode_cache_record(const Example& ex, std::vector<char>& out);
// Decodes the record at [p, end); returns the byte after it. Throws IoError on a malformed record.
const char* decode_cache_record(const char* p, const char* end, Example& ex, const std::string& source);

// The fingerprint of the options and data files a cache belongs to.
std::string cache_fingerprint(const std::vector<std::string>& data_paths,
                              const std::string& parse_options_text);

// A cache file's bytes: plain, or gzip through zlib (written with --compressed; recognised by its magic bytes
// when read).
class CacheFile {
 public:
  CacheFile() = default;
  CacheFile(const CacheFile&) = delete;
  CacheFile& operator=(const CacheFile&) = delete;
  ~CacheFile();
  bool open_read(const std::string& path);
  bool open_write(const std::string& path, bool compressed);
  size_t read(void* buf, size_t n, bool* error);  // fewer than n bytes only at the end or on an error
  bool write(const void* buf, size_t n);
  bool seek(uint64_t pos);  // from the start (a gzip file seeks by inflating)
  bool close();             // flushes; false when anything failed

 private:
  std::FILE* f_ = nullptr;
  ::gzFile_s* gz_ = nullptr;  // zlib's gzFile
};

class CacheWriter {
 public:
  // compressed: gzip the whole file (--compressed).
  CacheWriter(std::string path, const std::string& fingerprint, bool compressed = false);  // throws IoError
  ~CacheWriter();  // abandons an unfinished cache
  void append(const Example& ex);
  void finish();  // writes the trailer, flushes and renames into place

 private:
  void flush_buffer();
  std::string path_, tmp_;
  CacheFile file_;
  std::vector<char> buf_;
  uint64_t records_ = 0;
  uint32_t crc_ = 0;
  bool done_ = false;
};

// Reads whole records in blocks. open() verifies header, trailer and checksum; a cache that fails is reported
// through `why` and the caller rebuilds it.
class CacheReader {
 public:
  // suffix_only: the cache's fingerprint need only end with `fingerprint` (any data, the same parse options).
  static std::unique_ptr<CacheReader> open(const std::string& path, const std::string& fingerprint,
                                           std::string* why, bool suffix_only = false);
  ~CacheReader();
  // Fills `out` with whole records (about block_size bytes); false at the end.
  bool next_block(ByteBuffer& out, size_t block_size);
  void rewind();
  const std::string& path() const { return path_; }

 private:
  CacheReader() = default;
  std::string path_;
  CacheFile file_;
  uint64_t data_begin_ = 0, data_end_ = 0, pos_ = 0;
  ByteBuffer carry_;
};

}  // namespace lepus
