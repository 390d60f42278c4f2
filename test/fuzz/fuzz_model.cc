// Fuzz target: model files (io/model_file.h) and every learner's load (the registry, lepus/learner.h).
// The input is a model file. It is parsed as it is (so the checksum and header checks are fuzzed), then with
// its CRC-32 recomputed, so that mutations reach the saved options and the state. For every registry row a
// learner is made (the row's declared defaults; for the model's own learner also its saved options), and
// FeatureSpace::load then Learner::load read the state; a damaged state is a legitimate ModelFormatError.
// A state that loads must survive save -> load -> save unchanged, and predict/learn must run on it.
// Bits come from the saved bit_precision, capped at 16 so a run stays fast.
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "fuzz_common.h"
#include "io/model_file.h"
#include "lepus/errors.h"
#include "lepus/learner.h"
#include "lepus/loss.h"

namespace {

using namespace lepus;

const Loss& squared_loss() {
  static const std::unique_ptr<Loss> loss = make_loss(LossOptions{});
  return *loss;
}

// What the model's saved options say about bits and the feature space (the CLI's reading, simplified).
struct Shape {
  int bits = 18;
  FeatureSpaceOptions space;
  std::string learner;
};

Shape shape_of(const ModelFile& m) {
  Shape s;
  for (const auto& o : m.options) {
    if (o.name == "bit_precision") {
      int b = 0;
      const auto [p, ec] = std::from_chars(o.value.data(), o.value.data() + o.value.size(), b);
      if (ec == std::errc() && p == o.value.data() + o.value.size()) s.bits = b;
    } else if (o.name == "quadratic") {
      s.space.quadratic.push_back(o.value);
    } else if (o.name == "cubic") {
      s.space.cubic.push_back(o.value);
    } else if (o.name == "interactions") {
      s.space.interactions.push_back(o.value);
    } else if (o.name == "permutations") {
      s.space.permutations = o.given;
    } else if (o.name == "leave_duplicate_interactions") {
      s.space.leave_duplicates = o.given;
    } else if (o.name == "noconstant") {
      s.space.constant = !o.given;
    } else if (o.name == "learner") {
      s.learner = o.value;
    }
  }
  if (s.bits < 1 || s.bits > 30) s.bits = 18;
  if (s.bits > 16) s.bits = 16;
  // Keep a fuzzed interaction list small: at most 8 specs of each kind, none with more than two ':'
  // (each ':' multiplies the list by the up to 95 namespaces a model may say the wildcard has seen).
  auto trim = [](std::vector<std::string>& v) {
    std::erase_if(v, [](const std::string& spec) { return std::count(spec.begin(), spec.end(), ':') > 2; });
    if (v.size() > 8) v.resize(8);
  };
  trim(s.space.quadratic);
  trim(s.space.cubic);
  trim(s.space.interactions);
  return s;
}

// The row's declared defaults, plus the model's saved values of the row's own options when `saved` is given
// (as src/cli/config.cc fills LearnerContext::options).
OptionValues row_options(const LearnerRow& row, const ModelFile* saved) {
  OptionValues v;
  for (const auto& spec : row.options)
    if (spec.kind != OptionSpec::Kind::kFlag && !spec.default_value.empty())
      v.set(spec.name, spec.default_value, false);
  if (saved) {
    for (const auto& o : saved->options)
      for (const auto& spec : row.options) {
        if (o.name != spec.name) continue;
        if (spec.kind == OptionSpec::Kind::kFlag) {
          if (o.given) v.set(spec.name, "1", true);
        } else if (!o.value.empty()) {
          v.set(spec.name, o.value, o.given);
        }
      }
  }
  return v;
}

std::unique_ptr<FeatureSpace> make_space(const FeatureSpaceOptions& o) {
  try {
    return std::make_unique<FeatureSpace>(o);
  } catch (const ConfigError&) {  // a fuzzed interaction spec: fall back to the plain space
    return std::make_unique<FeatureSpace>(FeatureSpaceOptions{});
  }
}

// A small example with namespaces f, a and b, expanded through the loaded space.
Example probe(FeatureSpace& space) {
  Example ex;
  ex.label = 1.0f;
  ex.labeled = true;
  const unsigned char ns[3] = {'f', 'a', 'b'};
  for (uint32_t g = 0; g < 3; ++g) {
    const uint32_t at = static_cast<uint32_t>(ex.features.size());
    for (uint32_t k = 0; k < 3; ++k) ex.features.push_back(Feature{1000u * g + 17u * k + 1u, 0.5f + k});
    ex.groups.push_back(FeatureGroup{ns[g], at, at + 3});
  }
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  // At most 8 specs of up to 16 terms over 4 groups of <= 3 features: bounded, but cap it anyway.
  const uint64_t want = fuzz::expected_interactions(ex, space.interactions(), true, true, 1u << 20);
  try {
    if (want < (1u << 20)) space.expand(ex);
  } catch (const FeatureLimitError&) {  // wildcards past --max_features: an error, not a crash
  }
  return ex;
}

void exercise(const LearnerRow& row, const LearnerContext& ctx, const FeatureSpaceOptions& so,
              const std::vector<uint8_t>& state, const std::string& source) {
  std::unique_ptr<FeatureSpace> space = make_space(so);
  std::unique_ptr<Learner> learner = row.make(ctx);
  try {
    ModelReader r(state.data(), state.size(), source);
    space->load(r);
    learner->load(r);
  } catch (const ModelFormatError& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "  %s: load refused: %s\n", row.name.c_str(), e.what());
    return;
  }
  if (fuzz::verbose()) std::fprintf(stderr, "  %s (bits %d): loaded\n", row.name.c_str(), ctx.bits);
  // A loaded state saves and reloads to the same bytes.
  ModelWriter w1;
  space->save(w1);
  learner->save(w1);
  {
    std::unique_ptr<FeatureSpace> space2 = make_space(so);
    std::unique_ptr<Learner> learner2 = row.make(ctx);
    ModelReader r2(w1.bytes().data(), w1.bytes().size(), source + " (saved again)");
    try {
      space2->load(r2);
      learner2->load(r2);
    } catch (const ModelFormatError& e) {
      std::fprintf(stderr, "%s: a loaded state does not reload: %s\n", row.name.c_str(), e.what());
      std::abort();
    }
    FUZZ_CHECK(r2.remaining() == 0);
    ModelWriter w2;
    space2->save(w2);
    learner2->save(w2);
    FUZZ_CHECK(w1.bytes() == w2.bytes());
  }
  // Predicting and learning from any loaded state must not crash (values may be anything).
  const Example ex = probe(*space);
  learner->predict(ex);
  learner->learn(ex);
  learner->predict(ex);
  learner->end_pass();
  std::ostringstream readable;
  learner->write_readable(readable);
  learner->describe();
}

void run_model(const std::vector<uint8_t>& bytes) {
  ModelFile m;
  try {
    m = parse_model_bytes(bytes, "fuzz.model");
  } catch (const ModelFormatError& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "  %s\n", e.what());
    return;
  }
  FUZZ_CHECK(m.format_version == 1 || m.format_version == kModelFormatVersion);
  const Shape s = shape_of(m);
  for (const auto& row : learner_registry()) {
    // The model's own learner with its saved options when they make a learner, else the defaults.
    for (int pass = 0; pass < 2; ++pass) {
      const bool with_saved = pass == 0;
      if (with_saved && s.learner != row.name) continue;
      const OptionValues options = row_options(row, with_saved ? &m : nullptr);
      const LearnerContext ctx{options, squared_loss(), s.bits, false};
      try {
        row.make(ctx);
      } catch (const ConfigError& e) {
        if (fuzz::verbose()) std::fprintf(stderr, "  %s: options refused: %s\n", row.name.c_str(), e.what());
        continue;  // fuzzed option values a learner refuses
      }
      exercise(row, ctx, s.space, m.state, "fuzz.model");
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  run_model(bytes);  // as it is: checksum and header checks
  // With the checksum recomputed, so the fuzzer's mutations reach the options and the state.
  if (size >= 16 && std::memcmp(data, "LEPUSMDL", 8) == 0) {
    const uint32_t crc =
        static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), bytes.data(), static_cast<uInt>(size - 4)));
    if (std::memcmp(bytes.data() + size - 4, &crc, 4) != 0) {
      std::memcpy(bytes.data() + size - 4, &crc, 4);
      run_model(bytes);
    }
  }
  return 0;
}
