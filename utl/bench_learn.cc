// The learn stage alone (not a test: it checks nothing, it measures): the first LINES lines of FILE parsed
// once, then REPEATS times a fresh sgd learner (VW's default: adaptive, normalized, invariant; logistic loss;
// -b 18) learns them in order, each example's interactions expanded into one reused buffer just before it is
// learned, as the driver's learn stage does. Prints the fastest repeat (its thread's CPU time: a shared
// machine's other jobs move wall times much more) in nanoseconds per feature update and a checksum of every
// prediction's bits, so two builds can be compared for speed and for identical results. Each repeat's learner
// maps a fresh table, so its page faults are counted as a run's are. Built and run by utl/bench_learn against
// build/liblepus_lib.a.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "learners/gd.h"
#include "lepus/example.h"
#include "lepus/loss.h"

namespace {
// This thread's CPU time: a shared machine's other jobs move wall times much more than this.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct QuietSink : lepus::WarningSink {
  void warn(const std::string&) override {}
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_learn FILE [LINES] [REPEATS] [QUADRATIC|-] [vw_exact]\n");
    return 2;
  }
  const size_t want = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string quadratic = argc > 4 ? argv[4] : "ff";
  const bool vw_exact = argc > 5 && std::strcmp(argv[5], "vw_exact") == 0;
  std::ifstream in(argv[1]);
  if (!in) {
    std::perror(argv[1]);
    return 1;
  }
  const lepus::ParseOptions options;
  QuietSink sink;
  std::vector<lepus::Example> parsed;
  std::string line;
  while (parsed.size() < want && std::getline(in, line)) {
    parsed.emplace_back();
    lepus::parse_vw_line(line, options, parsed.back(), sink);
  }
  lepus::FeatureSpaceOptions fo;
  if (quadratic != "-") fo.quadratic.push_back(quadratic);
  lepus::FeatureSpace space(fo);
  const auto loss = lepus::make_loss(lepus::LossOptions{"logistic"});
  lepus::GdOptions go;
  go.vw_exact = vw_exact;
  size_t features = 0;
  uint64_t checksum = 0;
  double best = 1e300;
  lepus::Example work;
  for (int r = 0; r < repeats; ++r) {
    lepus::GdLearner learner(go, *loss, 18, false);
    features = 0;
    uint64_t sum = 1469598103934665603ull;
    const double t0 = cpu_seconds();
    for (size_t e = 0; e < parsed.size(); ++e) {
      work = parsed[e];
      space.expand(work);
      features += work.features.size();
      const lepus::Prediction p = learner.learn(work);
      uint32_t bits;
      std::memcpy(&bits, &p.raw, 4);
      sum = (sum ^ bits) * 1099511628211ull;
    }
    best = std::min(best, cpu_seconds() - t0);
    checksum = sum;
  }
  std::printf("%zu examples, %zu features; best of %d: %.4f s, %.3f ns/feature; predictions %016llx\n",
              parsed.size(), features, repeats, best, best * 1e9 / static_cast<double>(features),
              static_cast<unsigned long long>(checksum));
  return 0;
}
