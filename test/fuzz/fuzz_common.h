// Shared by the fuzz targets: invariant checks that abort() (so libFuzzer records the input), a sink for parse
// warnings, the interaction-count model FeatureSpace::expand must agree with, and an in-memory file for the
// readers that take a path.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_space.h"
#include "formats/format.h"
#include "lepus/example.h"
#include "lepus/hashing.h"

namespace lepus::fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_CHECK(cond)                                         \
  do {                                                           \
    if (!(cond)) ::lepus::fuzz::fail(__FILE__, __LINE__, #cond); \
  } while (0)

// LEPUS_FUZZ_VERBOSE=1 in the environment: targets say what they did with each input (for checking seeds).
inline bool verbose() {
  static const bool v = std::getenv("LEPUS_FUZZ_VERBOSE") != nullptr;
  return v;
}

// Counts warnings and checks each one says something.
class CountingSink final : public WarningSink {
 public:
  void warn(const std::string& message) override {
    FUZZ_CHECK(!message.empty());
    ++count;
  }
  uint64_t count = 0;
};

// The input split at '\n' (the reader hands parsers lines without it).
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// What every parser promises about its output (formats/*.h): linear features only, grouped in contiguous,
// non-empty runs of distinct groups covering all of them; no dropped group; finite, nonzero values (value 0
// is dropped, NaN and infinity are malformed); finite label, weight and base prediction.
inline void check_parsed(const Example& ex, const ParseOptions& options) {
  FUZZ_CHECK(std::isfinite(ex.label));
  FUZZ_CHECK(std::isfinite(ex.weight));
  FUZZ_CHECK(std::isfinite(ex.initial));
  FUZZ_CHECK(ex.num_linear == ex.features.size());
  if (ex.empty) {
    FUZZ_CHECK(ex.features.empty());
    FUZZ_CHECK(ex.groups.empty());
  }
  bool seen[256] = {false};
  uint32_t at = 0;
  for (const auto& g : ex.groups) {
    FUZZ_CHECK(g.begin == at);
    FUZZ_CHECK(g.end > g.begin);
    FUZZ_CHECK(!seen[g.ns]);
    FUZZ_CHECK(!options.drop_group[g.ns]);
    seen[g.ns] = true;
    at = g.end;
  }
  FUZZ_CHECK(at == ex.features.size());
  for (const auto& f : ex.features) {
    FUZZ_CHECK(std::isfinite(f.value));
    FUZZ_CHECK(f.value != 0.0f);
  }
}

// The number of features one interaction generates (feature_space.h): nothing if a term's group is absent or
// there are more than 16 terms; otherwise, per run of equal adjacent terms of length m over a group of n
// features, n^m ordered tuples with --permutations, else the C(n+m-1, m) non-decreasing ones. Saturates at
// `cap` so a caller can refuse to expand a huge example.
inline uint64_t interaction_count(const std::string& terms, const uint32_t group_size[256], bool permutations,
                                  uint64_t cap) {
  if (terms.size() > 16) return 0;
  uint64_t total = 1;
  for (size_t k = 0; k < terms.size();) {
    size_t m = 1;
    while (!permutations && k + m < terms.size() && terms[k + m] == terms[k]) ++m;
    const uint64_t n = group_size[static_cast<unsigned char>(terms[k])];
    if (n == 0) return 0;
    // C(n+m-1, m) = prod_{i=1..m} (n-1+i)/i, exact at every step; n^m when permuting (m == 1 then).
    uint64_t c = 1;
    for (uint64_t i = 1; i <= m; ++i) {
      if (c > cap) return cap + 1;
      c = c * (n - 1 + i) / i;
    }
    if (c > cap || total > cap / c) return cap + 1;
    total *= c;
    k += m;
  }
  return total;
}

// Interaction features a parsed (not yet expanded) example gets from the interaction list `active` (what
// FeatureSpace::interactions() says once expand() has refreshed the wildcards).
// The constant never takes part in an interaction, even one that names its group byte 0x80 explicitly: that
// is what lepus does (FeatureSpace::expand maps the groups before it appends the constant). VW would pair the
// constant there (its constant lives in namespace 128); reported with crashes/vw_text/crash-65db5fd9...
// (crashes/README.md). A parsed group whose first byte is 0x80 does interact. `constant` is unused for now.
inline uint64_t expected_interactions(const Example& ex, const std::vector<std::string>& active,
                                      bool constant, bool permutations, uint64_t cap) {
  (void)constant;
  uint32_t size[256] = {0};
  for (const auto& g : ex.groups) size[g.ns] = g.end - g.begin;
  uint64_t total = 0;
  for (const auto& terms : active) {
    total += interaction_count(terms, size, permutations, cap);
    if (total > cap) return cap + 1;
  }
  return total;
}

// After FeatureSpace::expand: the linear part keeps its groups (plus the constant), minus the --ignore_linear
// ones; the interactions follow; num_reported counts everything generated.
inline void check_expanded(const Example& ex, uint32_t parsed, uint64_t interactions, bool constant,
                           const std::array<bool, 256>& ignore_linear) {
  uint32_t at = 0;
  uint32_t kept_parsed = 0;
  for (size_t i = 0; i < ex.groups.size(); ++i) {
    const FeatureGroup& g = ex.groups[i];
    FUZZ_CHECK(g.begin == at);
    FUZZ_CHECK(g.end > g.begin);
    FUZZ_CHECK(g.ns == kConstantNamespace || !ignore_linear[g.ns]);
    if (constant && i + 1 == ex.groups.size()) {  // the constant: the last group, one feature
      FUZZ_CHECK(g.ns == kConstantNamespace && g.end - g.begin == 1);
      FUZZ_CHECK(ex.features[g.begin].index == kConstantIndex && ex.features[g.begin].value == 1.0f);
    } else {
      kept_parsed += g.end - g.begin;
    }
    at = g.end;
  }
  FUZZ_CHECK(at == ex.num_linear);
  FUZZ_CHECK(kept_parsed <= parsed);
  FUZZ_CHECK(ex.num_linear == kept_parsed + (constant ? 1u : 0u));
  if (ex.features.size() != ex.num_linear + interactions) {
    std::fprintf(stderr, "features %zu, linear %u, expected interactions %llu; groups:", ex.features.size(),
                 ex.num_linear, static_cast<unsigned long long>(interactions));
    for (const auto& g : ex.groups) std::fprintf(stderr, " 0x%02x[%u,%u)", g.ns, g.begin, g.end);
    std::fprintf(stderr, "\n");
  }
  FUZZ_CHECK(ex.features.size() == ex.num_linear + interactions);
  FUZZ_CHECK(ex.num_reported == parsed + (constant ? 1u : 0u) + interactions);
  for (uint32_t i = 0; i < ex.num_linear; ++i) FUZZ_CHECK(std::isfinite(ex.features[i].value));
  // Interaction values are products of finite values: they may overflow to infinity (a known limitation,
  // see test/fuzz/README.md), but a NaN would mean a value that was never a number got in.
  for (size_t i = ex.num_linear; i < ex.features.size(); ++i) FUZZ_CHECK(!std::isnan(ex.features[i].value));
}

// One anonymous in-memory file per process (memfd), rewritten for each input; readers open it by its
// /proc/self/fd path, so nothing touches the disk and nothing is left behind.
class MemFile {
 public:
  MemFile() {
    fd_ = ::memfd_create("lepus-fuzz", 0);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t w = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (w <= 0) std::abort();
      done += static_cast<size_t>(w);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace lepus::fuzz
