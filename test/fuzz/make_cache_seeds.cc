// Writes the cache target's seeds: small valid example caches under the fingerprint fuzz_cache.cc opens them
// with, from VW text and libsvm files. Usage: fuzz_make_cache_seeds OUT_DIR FILE... (see make_corpus).
// Each input file gives one cache of its first 12 examples (.vw files parsed as VW text, others as libsvm);
// an empty cache (no record) is written too, and two from built-in lines with multiclass and cost-sensitive
// labels (the test data has none).
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>

#include "formats/libsvm.h"
#include "formats/vw_text.h"
#include "io/example_cache.h"

namespace {

class Quiet final : public lepus::WarningSink {
 public:
  void warn(const std::string&) override {}
};

// VW text lines in a label mode, labeled, unlabeled and with bad labels, as one cache.
void write_lines(const std::string& path, const std::string& fingerprint, lepus::LabelMode mode,
                 std::initializer_list<const char*> lines) {
  lepus::CacheWriter w(path, fingerprint);
  lepus::ParseOptions options;
  options.label_mode = mode;
  Quiet quiet;
  lepus::Example ex;
  uint64_t n = 0;
  for (const char* line : lines) {
    lepus::parse_vw_line(line, options, ex, quiet);
    ex.line = ++n;
    w.append(ex);
  }
  w.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR FILE...\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const std::string fingerprint = "lepus-fuzz";
  {
    lepus::CacheWriter w(out + "/empty.cache", fingerprint);
    w.finish();
  }
  write_lines(out + "/multiclass.cache", fingerprint, lepus::LabelMode::kMulticlass,
              {"3 |f a b:2", "1 2.5 'tag |f a |g c", "0 |f b", "|f a", "7 x |f c", "2 1 1 |f a"});
  write_lines(out + "/cost_sensitive.cache", fingerprint, lepus::LabelMode::kCostSensitive,
              {"1:0.5 2:1 3 |f a b:2", "1 2 3 |f a", "4:-1 'tag |f a |g c", "|f b", "1:x 2:1 |f c"});
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    const bool vw = path.size() > 3 && path.compare(path.size() - 3, 3, ".vw") == 0;
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", path.c_str());
      return 1;
    }
    const size_t slash = path.rfind('/');
    lepus::CacheWriter w(out + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1) + ".cache",
                         fingerprint);
    lepus::ParseOptions options;
    Quiet quiet;
    lepus::Example ex;
    std::string line;
    uint64_t n = 0, written = 0;
    while (written < 12 && std::getline(in, line)) {
      ++n;
      if (vw)
        lepus::parse_vw_line(line, options, ex, quiet);
      else
        lepus::parse_libsvm_line(line, options, ex, quiet);
      if (ex.empty) continue;
      ex.line = n;
      w.append(ex);
      ++written;
    }
    w.finish();
  }
  return 0;
}
