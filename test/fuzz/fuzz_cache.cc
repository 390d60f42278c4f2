// Fuzz target: the example cache (io/example_cache.h). The input is a cache file; it is opened with
// CacheReader::open under a fixed fingerprint as it is (header, trailer and checksum checks), then with its
// checksum recomputed, so that mutations reach the records. Every record is decoded with decode_cache_record;
// a malformed record is a legitimate IoError. Checks: decoded groups lie inside the decoded features,
// re-encoding a record gives its bytes back, a rewind reads the same records again, and the decoded example
// expands through a feature space with -q and a ':' wildcard.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "fuzz_common.h"
#include "io/example_cache.h"
#include "lepus/errors.h"

namespace {

using namespace lepus;

// The fingerprint the seed corpus was written with (test/fuzz/make_corpus).
const std::string kFingerprint = "lepus-fuzz";
constexpr size_t kTrailerSize = 4 + 8 + 4 + 8;
constexpr uint64_t kMaxInteractions = 100000;

// Every record of the open cache, decoded and checked, as the records' bytes concatenated.
std::string read_records(CacheReader& reader, size_t block, bool expand) {
  static FeatureSpaceOptions so = [] {
    FeatureSpaceOptions o;
    o.quadratic = {"ff", "f:"};
    return o;
  }();
  FeatureSpace space(so);
  std::string all;
  ByteBuffer buf;
  Example ex;
  std::vector<char> again;
  while (reader.next_block(buf, block)) {
    FUZZ_CHECK(!buf.empty());
    const char* p = buf.data();
    const char* const end = p + buf.size();
    while (p < end) {
      const char* next = decode_cache_record(p, end, ex, reader.path());
      FUZZ_CHECK(next > p && next <= end);
      // The decoded groups must describe the decoded features.
      FUZZ_CHECK(ex.num_linear == ex.features.size());
      uint32_t at = 0;
      for (const auto& g : ex.groups) {
        FUZZ_CHECK(g.begin == at);
        FUZZ_CHECK(g.end >= g.begin);
        FUZZ_CHECK(g.end <= ex.features.size());
        at = g.end;
      }
      FUZZ_CHECK(at == ex.features.size());
      // Decoding is the inverse of encoding (up to the labeled byte, read as != 0).
      again.clear();
      encode_cache_record(ex, again);
      std::vector<char> original(p, next);
      if (original.size() > 12) original[12] = original[12] != 0 ? 1 : 0;
      FUZZ_CHECK(again == original);
      if (expand) {
        // Skip empty groups (the parsers never make them) and bound the expansion.
        Example e = ex;
        std::erase_if(e.groups, [](const FeatureGroup& g) { return g.begin == g.end; });
        uint32_t ns_seen[256] = {0};
        bool distinct = true;
        for (const auto& g : e.groups) distinct &= ns_seen[g.ns]++ == 0;
        // -q ff and f: give fewer than 2 n^2 features for n - 1 linear ones.
        const uint64_t n = e.features.size() + 1;
        if (distinct && n * n <= kMaxInteractions) space.expand(e);
      }
      all.append(p, next);
      p = next;
    }
  }
  return all;
}

void run_cache(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  std::string why;
  std::unique_ptr<CacheReader> reader = CacheReader::open(path, kFingerprint, &why);
  if (!reader) {
    FUZZ_CHECK(!why.empty());
    if (fuzz::verbose()) std::fprintf(stderr, "  not opened: %s\n", why.c_str());
    return;
  }
  static const size_t kBlocks[4] = {1, 16, 100, size_t{1} << 16};
  std::string first;
  try {
    first = read_records(*reader, kBlocks[size % 4], true);
  } catch (const IoError& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "  %s\n", e.what());
    return;
  }
  if (fuzz::verbose()) std::fprintf(stderr, "  %zu record bytes read\n", first.size());
  reader->rewind();
  const std::string second = read_records(*reader, kBlocks[(size / 4 + 1) % 4], false);
  FUZZ_CHECK(first == second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run_cache(data, size);  // as it is
  // With the checksum recomputed over the records (the header's fingerprint length says where they start).
  if (size >= 20 && std::memcmp(data, "LEPUSCAC", 8) == 0) {
    uint64_t fp_len;
    std::memcpy(&fp_len, data + 12, 8);
    if (fp_len <= size && 20 + fp_len + kTrailerSize <= size) {
      const size_t begin = 20 + fp_len, end = size - kTrailerSize;
      std::vector<uint8_t> fixed(data, data + size);
      const uint32_t crc = static_cast<uint32_t>(
          crc32(crc32(0L, Z_NULL, 0), fixed.data() + begin, static_cast<uInt>(end - begin)));
      if (std::memcmp(fixed.data() + end + 12, &crc, 4) != 0) {
        std::memcpy(fixed.data() + end + 12, &crc, 4);
        run_cache(fixed.data(), fixed.size());
      }
    }
  }
  return 0;
}
