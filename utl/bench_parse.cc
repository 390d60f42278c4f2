// The VW text parser alone (not a test: it checks nothing, it measures): the first LINES lines of FILE parsed
// REPEATS times into one reused Example, the fastest repeat reported as nanoseconds per feature and per byte.
// Built and run by utl/bench_parse against build/liblepus_lib.a.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "formats/vw_text.h"
#include "lepus/example.h"

namespace {
struct QuietSink : lepus::WarningSink {
  size_t warnings = 0;
  void warn(const std::string&) override { ++warnings; }
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_parse FILE [LINES] [REPEATS]\n");
    return 2;
  }
  const size_t want = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 15;
  std::ifstream in(argv[1]);
  if (!in) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<std::string> lines;
  std::string line;
  size_t bytes = 0;
  while (lines.size() < want && std::getline(in, line)) {
    bytes += line.size() + 1;
    lines.push_back(line);
  }
  const lepus::ParseOptions options;
  QuietSink sink;
  lepus::Example ex;
  size_t features = 0;
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    features = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& l : lines) {
      ex.clear();
      lepus::parse_vw_line(l, options, ex, sink);
      features += ex.features.size();
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%zu lines, %zu features, %zu bytes; best of %d: %.4f s, %.2f ns/feature, %.3f ns/byte\n",
              lines.size(), features, bytes, repeats, best, best * 1e9 / static_cast<double>(features),
              best * 1e9 / static_cast<double>(bytes));
  return sink.warnings == 0 ? 0 : 1;
}
