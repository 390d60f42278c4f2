// Writes the cache target's seeds: small valid example caches under the fingerprint fuzz_cache.cc opens them
// with, from VW text and libsvm files. Usage: fuzz_make_cache_seeds OUT_DIR FILE... (see make_corpus).
// Each input file gives one cache of its first 12 examples (.vw files parsed as VW text, others as libsvm);
// an empty cache (no record) is written too.
#include <cstdio>
#include <fstream>
#include <string>

#include "formats/libsvm.h"
#include "formats/vw_text.h"
#include "io/example_cache.h"

namespace {

class Quiet final : public lepus::WarningSink {
 public:
  void warn(const std::string&) override {}
};

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
