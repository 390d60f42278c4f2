// Interaction generation and ordering as VW 9.11.2 does it.
#include "core/feature_space.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <unordered_set>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/cpu.h"
#include "lepus/hashing.h"

namespace lepus {
namespace {

bool unsigned_less(const std::string& a, const std::string& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
  });
}

// VW sorts an interaction whose repeated letters are not adjacent ("aba" becomes "aab").
std::string canonical_order(std::string s) {
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = i + 2; j < s.size(); ++j)
      if (s[i] == s[j] && s.find_first_not_of(s[i], i) < j) {
        std::sort(s.begin(), s.end(), [](char x, char y) {
          return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
        });
        return s;
      }
  return s;
}

}  // namespace

std::vector<std::string> FeatureSpace::normalize(std::vector<std::string> list, bool leave_duplicates) {
  for (auto& s : list) s = canonical_order(s);
  std::stable_sort(list.begin(), list.end(), [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return unsigned_less(a, b);
  });
  if (leave_duplicates) return list;
  std::vector<std::string> out;
  std::unordered_set<std::string> keys;  // linear in the list: a wildcard can make 10^5 interactions
  for (const auto& s : list) {
    std::string key = s;
    std::sort(key.begin(), key.end());
    if (!keys.insert(std::move(key)).second) continue;
    out.push_back(s);
  }
  return out;
}

FeatureSpace::FeatureSpace(const FeatureSpaceOptions& options) : opt_(options) {
  for (uint32_t n : opt_.ngram) any_ngram_ = any_ngram_ || n > 1;
  std::vector<std::string> all;
  auto add = [&](const std::vector<std::string>& specs, size_t len, const char* flag) {
    for (const auto& s : specs) {
      if ((len != 0 && s.size() != len) || s.size() < 2)
        throw ConfigError(std::string(flag) + " '" + s + "' must name " +
                          (len != 0 ? std::to_string(len) : std::string("at least 2")) +
                          " namespaces (first letters), e.g. " + (len == 3 ? "abc" : "ab"));
      all.push_back(s);
    }
  };
  add(options.quadratic, 2, "-q");
  add(options.cubic, 3, "--cubic");
  add(options.interactions, 0, "--interactions");
  for (auto& s : all) {
    if (s.find(':') != std::string::npos)
      wildcards_.push_back(s);
    else
      explicit_.push_back(s);
  }
  for (const auto& spec : all)
    if (spec.size() > kMaxInteractionOrder)
      throw ConfigError("interaction '" + spec + "' has " + std::to_string(spec.size()) +
                        " namespaces; lepus " + "supports at most " + std::to_string(kMaxInteractionOrder));
  explicit_ = normalize(explicit_, options.leave_duplicates);
  for (bool b : options.ignore_linear) any_ignore_linear_ |= b;
}

std::vector<std::string> FeatureSpace::describe() const {
  std::string pairs, triples;
  for (const auto& s : explicit_) {
    if (s.size() == 2) pairs += (pairs.empty() ? "" : " ") + s;
    if (s.size() == 3) triples += (triples.empty() ? "" : " ") + s;
  }
  for (const auto& s : wildcards_) {  // as given: what they expand to depends on the namespaces seen
    if (s.size() == 2) pairs += (pairs.empty() ? "" : " ") + s;
    if (s.size() == 3) triples += (triples.empty() ? "" : " ") + s;
  }
  std::vector<std::string> lines;
  if (!pairs.empty()) lines.push_back("creating quadratic features for pairs: " + pairs);
  if (!triples.empty()) lines.push_back("creating cubic features for triples: " + triples);
  return lines;
}

void FeatureSpace::save(ModelWriter& out) const {
  out.put_string(std::string(seen_list_.begin(), seen_list_.end()));
}

void FeatureSpace::load(ModelReader& in) {
  const std::string seen = in.get_string("wildcard namespaces");
  Example ex;
  for (unsigned char c : seen) {
    if (c < 0x20 || c > 0x7E) throw ModelFormatError(in.source() + ": bad wildcard namespace in model");
    ex.groups.push_back(FeatureGroup{c, 0, 0});
  }
  if (!wildcards_.empty())
    refresh_wildcards(ex);
  else
    for (unsigned char c : seen)
      if (!seen_[c]) {
        seen_[c] = true;
        seen_list_.push_back(c);
      }
}

void FeatureSpace::refresh_wildcards(const Example& ex) {
  bool changed = false;
  for (const auto& g : ex.groups) {
    if (g.ns >= 0x20 && g.ns <= 0x7E && !seen_[g.ns]) {
      seen_[g.ns] = true;
      seen_list_.push_back(g.ns);
      changed = true;
    }
  }
  if (changed) std::sort(seen_list_.begin(), seen_list_.end());
}

// With wildcards, VW's list is every explicit interaction and every wildcard filled in from the namespaces seen
// so far, normalised. Only namespaces the example has can generate features, and normalising the part of that
// list within the example's namespaces gives exactly the same interactions in the same order (a duplicate's
// kept form has the same namespaces). So the list is made per set of namespaces present, costing what the
// example generates rather than what every seen namespace could make, and cached (examples mostly repeat a
// few sets). Candidates count toward --max_features.
const std::vector<std::string>& FeatureSpace::interactions_for(const Example& ex) {
  std::string key;  // every namespace present; wildcards take the printable ones (as VW's ':' does)
  for (const auto& g : ex.groups) key += static_cast<char>(g.ns);
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  const auto hit = by_present_.find(key);
  if (hit != by_present_.end()) return hit->second;
  std::array<bool, 256> in{};
  std::string present;
  for (unsigned char c : key) {
    in[c] = true;
    if (c >= 0x20 && c <= 0x7E) present += static_cast<char>(c);
  }
  std::vector<std::string> all;
  for (const auto& terms : explicit_) {
    bool inside = true;
    for (unsigned char c : terms) inside = inside && in[c];
    if (inside) all.push_back(terms);
  }
  for (const auto& spec : wildcards_) {
    double candidates = 1.0;
    for (char c : spec) candidates *= c == ':' ? static_cast<double>(present.size()) : 1.0;
    if (static_cast<double>(all.size()) + candidates > static_cast<double>(opt_.max_features))
      throw FeatureLimitError("the wildcard interaction " + spec + " over this example's " +
                              std::to_string(present.size()) + " namespaces makes more than --max_features " +
                              std::to_string(opt_.max_features) + " interactions");
    std::vector<std::string> partial{""};
    for (char c : spec) {
      std::vector<std::string> next;
      for (const auto& p : partial) {
        if (c == ':') {
          for (char g : present) next.push_back(p + g);
        } else if (in[static_cast<unsigned char>(c)]) {
          next.push_back(p + c);
        }
      }
      partial.swap(next);
    }
    all.insert(all.end(), partial.begin(), partial.end());
  }
  if (by_present_.size() >= 4096) by_present_.clear();  // bounded memory for streams of ever-new sets
  std::vector<std::string>& list = by_present_[key];
  list = normalize(std::move(all), opt_.leave_duplicates);
  return list;
}

// A product of feature values that overflows float is clamped to +-FLT_MAX and counted (never inf, never NaN).
#define LEPUS_PRODUCT(a, b) clamp_product((a) * (b), clamped_)
namespace {
inline float clamp_product(float p, uint64_t& clamped) {
  if (std::isinf(p)) [[unlikely]] {
    ++clamped;
    return std::copysign(FLT_MAX, p);
  }
  return p;
}
}  // namespace

namespace {
// One row of a pair interaction: out[k] = {h ^ src[k].index, v * src[k].value} for k < m; returns out + m.
Feature* pair_row(Feature* out, const Feature* src, size_t m, uint64_t h, float v) {
  for (size_t k = 0; k < m; ++k) out[k] = Feature{h ^ src[k].index, v * src[k].value};
  return out + m;
}

#if defined(__x86_64__)
// The same, two features per 32-byte vector (AVX2, chosen at run time): the index quadwords are XORed with h, the
// value dwords multiplied by v (the same IEEE products as pair_row; the other dwords are zeroed before the
// multiplication, so no stray bit pattern meets the multiplier), and the two blended.
__attribute__((target("avx2"))) Feature* pair_row_avx2(Feature* out, const Feature* src, size_t m, uint64_t h,
                                                       float v) {
  static_assert(sizeof(Feature) == 16 && offsetof(Feature, value) == 8);
  const __m256i hx = _mm256_setr_epi64x(static_cast<long long>(h), 0, static_cast<long long>(h), 0);
  const __m256i value_lanes = _mm256_setr_epi32(0, 0, -1, 0, 0, 0, -1, 0);
  const __m256 vv = _mm256_set1_ps(v);
  size_t k = 0;
  for (; k + 2 <= m; k += 2) {
    const __m256i f = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k));
    const __m256 p = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_and_si256(f, value_lanes)), vv);
    const __m256i r = _mm256_blend_epi32(_mm256_xor_si256(f, hx), _mm256_castps_si256(p), 0x44);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), r);
  }
  if (k < m) out[k] = Feature{h ^ src[k].index, v * src[k].value};
  return out + m;
}
const bool kHaveAvx2 = has_avx2();
#endif
}  // namespace

void FeatureSpace::generate(Example& ex, const unsigned char* terms, size_t n) {
  FeatureGroup ranges[kMaxInteractionOrder];
  for (size_t k = 0; k < n; ++k) {
    const int gi = group_of_[terms[k]];
    if (gi == 0) return;  // an empty group gives nothing
    ranges[k] = ex.groups[gi - 1];
  }
  bool same_as_prev[kMaxInteractionOrder] = {false};
  for (size_t k = 1; k < n; ++k) same_as_prev[k] = !opt_.permutations && terms[k] == terms[k - 1];
  // The features this interaction makes: a run of m equal terms over g features gives C(g+m-1, m) (each
  // combination once) or g^m with --permutations; more than --max_features in all is an error.
  double count = 1.0;
  for (size_t k = 0; k < n;) {
    size_t m = 1;
    while (k + m < n && same_as_prev[k + m]) ++m;
    const double g = ranges[k].end - ranges[k].begin;
    double c = 1.0;
    for (size_t j = 0; j < m; ++j) c = c * (g + j) / (j + 1);  // C(g+m-1, m); g when m = 1
    count *= c;
    k += m;
  }
  if (count >= 9007199254740992.0)  // 2^53: the count would be inexact (and 144 PB of features)
    throw FeatureLimitError("the interaction " + std::string(terms, terms + n) + " would make " +
                            std::to_string(static_cast<uint64_t>(std::min(count, 1e19))) +
                            " features, more than fit in memory");
  if (static_cast<double>(ex.features.size()) + count > static_cast<double>(opt_.max_features))
    throw FeatureLimitError("the interaction " + std::string(terms, terms + n) + " would make " +
                            std::to_string(static_cast<uint64_t>(std::min(count, 1e19))) +
                            " features, more than --max_features " + std::to_string(opt_.max_features) +
                            " for one example");

  // The example grows by the whole interaction at once (geometric growth), so no reallocation happens below and fs
  // (the linear features it is made from) stays valid. FeatureVector's resize leaves the new features unwritten, and
  // they are written once, in place, through a pointer: push_back per feature (a capacity test and a store of the
  // vector's end each) took a third more time on rcv1 -q ff, and the staging block that was copied into the example
  // before was 6.8% of that run's samples.
  const size_t start = ex.features.size();
  const size_t need = start + static_cast<size_t>(count);
  if (need > ex.features.capacity()) ex.features.reserve(std::max(need, 2 * ex.features.capacity()));
  ex.features.resize(need);
  const Feature* const fs = ex.features.data();
  Feature* out = ex.features.data() + start;
  // Every interaction writes exactly `count` features; a miscount would leave unwritten features in the example.
  auto check_count = [&] {
    if (out != ex.features.data() + need) throw std::logic_error("interaction feature count mismatch");
  };
  if (n == 2 && !opt_.keep_names) {  // the common case, without recursion
    const FeatureGroup a = ranges[0], b = ranges[1];
    for (uint32_t i = a.begin; i < a.end; ++i) {
      const uint64_t h = kInteractionPrime * fs[i].index;
      const float v = fs[i].value;
      const uint32_t j = same_as_prev[1] ? i : b.begin;
#if defined(__x86_64__)
      out = kHaveAvx2 ? pair_row_avx2(out, fs + j, b.end - j, h, v) : pair_row(out, fs + j, b.end - j, h, v);
#else
      out = pair_row(out, fs + j, b.end - j, h, v);
#endif
    }
    check_count();
    // Overflowed products (only possible when the largest values' product passes FLT_MAX) are clamped after.
    float amax = 0.0f, bmax = 0.0f;
    for (uint32_t i = a.begin; i < a.end; ++i) amax = std::max(amax, std::fabs(fs[i].value));
    for (uint32_t j = b.begin; j < b.end; ++j) bmax = std::max(bmax, std::fabs(fs[j].value));
    if (static_cast<double>(amax) * bmax > FLT_MAX) [[unlikely]]
      for (size_t k = start; k < ex.features.size(); ++k)
        ex.features[k].value = LEPUS_PRODUCT(ex.features[k].value, 1.0f);
    return;
  }
  // Names kept: the positions of the current term features, and each feature's name made of theirs (appended as
  // the feature is written).
  uint32_t at[kMaxInteractionOrder];
  auto rec = [&](auto&& self, size_t level, uint64_t h, float v, uint32_t prev) -> void {
    const FeatureGroup r = ranges[level];
    for (uint32_t p = same_as_prev[level] ? prev : r.begin; p < r.end; ++p) {
      const uint64_t idx = fs[p].index;
      const float val = fs[p].value;
      at[level] = p;
      if (level == 0) {
        self(self, 1, kInteractionPrime * idx, val, p);
      } else if (level + 1 == n) {
        *out++ = Feature{h ^ idx, LEPUS_PRODUCT(v, val)};
        if (opt_.keep_names) {
          FeatureName name;
          for (size_t k = 0; k < n; ++k)
            name.insert(name.end(), ex.names[at[k]].begin(), ex.names[at[k]].end());
          ex.names.push_back(std::move(name));
        }
      } else {
        self(self, level + 1, kInteractionPrime * (h ^ idx), LEPUS_PRODUCT(v, val), p);
      }
    }
  };
  rec(rec, 0, 0, 1.0f, 0);
  check_count();
}

namespace {
// VW's k-skip n-grams of one namespace's features f[0, length) (kskip_ngram_transformer.cc, add_grams): with
// mask = {0, d1, d2, ...} the offsets of a gram's features from its first, every gram f[i], f[i + d1], ... that
// fits is appended, value 1, index ((f[i] * C + f[i + d1]) * C + ...); then the gram one feature longer (offset
// + 1 + skips), then, while skips remain, the same with one more feature skipped before the next.
// Names kept (names non-null, fn the namespace's names): a gram is named in its first feature's namespace, the
// features' names joined by '^'.
void add_grams(size_t ngram, size_t skip_gram, const Feature* f, size_t length, std::vector<size_t>& mask,
               size_t skips, FeatureVector& out, const FeatureName* fn, std::vector<FeatureName>* names) {
  if (ngram == 0 && mask.back() < length) {
    const size_t last = length - mask.back();
    for (size_t i = 0; i < last; ++i) {
      uint64_t index = f[i].index;
      for (size_t n = 1; n < mask.size(); ++n) index = index * kNgramPrime + f[i + mask[n]].index;
      out.push_back(Feature{index, 1.0f});
      if (names) {
        std::string name = fn[i].front().name;
        for (size_t n = 1; n < mask.size(); ++n) name += "^" + fn[i + mask[n]].front().name;
        names->push_back({NamePart{fn[i].front().ns, std::move(name), {}}});
      }
    }
  }
  if (ngram > 0) {
    mask.push_back(mask.back() + 1 + skips);
    add_grams(ngram - 1, skip_gram, f, length, mask, 0, out, fn, names);
    mask.pop_back();
  }
  if (skip_gram > 0 && ngram > 0) add_grams(ngram, skip_gram - 1, f, length, mask, skips + 1, out, fn, names);
}
}  // namespace

// --ngram / --skips: each namespace's grams of 2..n features follow its own features (VW's generate_grams), so
// the groups are rebuilt into ngram_out_ and swapped in.
void FeatureSpace::add_ngrams(Example& ex) {
  bool any = false;
  for (const FeatureGroup& g : ex.groups) any = any || opt_.ngram[g.ns] > 1;
  if (!any) return;  // none of this example's namespaces has n-grams: nothing to rebuild
  ngram_out_.clear();
  ngram_groups_.clear();
  const bool named = opt_.keep_names;
  std::vector<FeatureName> names;
  for (const FeatureGroup& g : ex.groups) {
    const uint32_t begin = static_cast<uint32_t>(ngram_out_.size());
    ngram_out_.insert(ngram_out_.end(), ex.features.begin() + g.begin, ex.features.begin() + g.end);
    if (named) names.insert(names.end(), ex.names.begin() + g.begin, ex.names.begin() + g.end);
    const size_t length = g.end - g.begin;
    for (size_t n = 1; n < opt_.ngram[g.ns]; ++n) {
      gram_mask_.assign(1, 0);
      // add_grams reads the namespace's own features (in ex), never the grams it appends.
      add_grams(n, opt_.skips[g.ns], ex.features.data() + g.begin, length, gram_mask_, 0, ngram_out_,
                named ? ex.names.data() + g.begin : nullptr, named ? &names : nullptr);
      if (ngram_out_.size() > opt_.max_features)
        throw FeatureLimitError("--ngram makes more than --max_features " +
                                std::to_string(opt_.max_features) + " features for one example");
    }
    ngram_groups_.push_back(FeatureGroup{g.ns, begin, static_cast<uint32_t>(ngram_out_.size())});
  }
  ex.features.swap(ngram_out_);
  ex.groups.swap(ngram_groups_);
  if (named) ex.names.swap(names);
}

float FeatureSpace::invariant_norm(const Example& ex) const {
  float h = 0.0f;
  for (const auto& g : ex.groups) {
    float s = 0.0f;
    for (uint32_t i = g.begin; i < g.end; ++i) s += ex.features[i].value * ex.features[i].value;
    h += s;
  }
  for (const auto& t : *list_) {
    const auto* terms = reinterpret_cast<const unsigned char*>(t.data());
    const size_t n = t.size();
    float prod = 1.0f;
    bool empty = false;
    for (size_t k = 0; k < n && !empty;) {
      size_t m = 1;
      while (k + m < n && terms[k + m] == terms[k] && !opt_.permutations) ++m;
      const int gi = group_of_[terms[k]];
      if (gi == 0) {
        empty = true;
        break;
      }
      const FeatureGroup g = ex.groups[gi - 1];
      float r[kMaxInteractionOrder] = {0.0f};
      for (uint32_t i = g.begin; i < g.end; ++i) {
        const float x2 = ex.features[i].value * ex.features[i].value;
        r[0] += x2;
        for (size_t j = 1; j < m; ++j) r[j] += r[j - 1] * x2;
      }
      prod *= r[m - 1];
      k += m;
    }
    if (!empty) h += prod;
  }
  return h;
}

void FeatureSpace::expand(Example& ex) {
  if (!wildcards_.empty()) {
    refresh_wildcards(ex);
    list_ = &interactions_for(ex);
  } else {
    list_ = &explicit_;
  }
  if (any_ngram_) add_ngrams(ex);  // VW makes them before the constant and the interactions, which use them
  const uint32_t parsed = static_cast<uint32_t>(ex.features.size());
  for (size_t i = 0; i < ex.groups.size(); ++i) group_of_[ex.groups[i].ns] = static_cast<int>(i) + 1;
  if (opt_.constant) {
    const uint32_t at = static_cast<uint32_t>(ex.features.size());
    ex.features.push_back(Feature{kConstantIndex, 1.0f});
    ex.groups.push_back(FeatureGroup{kConstantNamespace, at, at + 1});
    if (opt_.keep_names) ex.names.push_back({NamePart{{}, "Constant", {}}});
  }
  if (opt_.multiplier != 1)
    for (Feature& f : ex.features) f.index *= opt_.multiplier;
  for (const auto& t : *list_) generate(ex, reinterpret_cast<const unsigned char*>(t.data()), t.size());
  if (opt_.invariant_norm) {
    // Squares of values near 1e19 overflow (and inf * 0 is NaN): keep the norm a finite number (found by fuzzing).
    const float h = invariant_norm(ex);
    ex.invariant_norm = h <= FLT_MAX ? h : FLT_MAX;
  }
  for (size_t i = 0; i + (opt_.constant ? 1 : 0) < ex.groups.size(); ++i) group_of_[ex.groups[i].ns] = 0;
  ex.num_reported = static_cast<uint32_t>(ex.features.size());
  ex.num_linear = parsed + (opt_.constant ? 1 : 0);

  if (any_ignore_linear_) {  // drop linear terms of --ignore_linear groups; they already fed interactions
    FeatureVector& f = ex.features;
    uint32_t out = 0;
    std::vector<FeatureGroup> kept;
    for (const auto& g : ex.groups) {
      if (g.ns != kConstantNamespace && opt_.ignore_linear[g.ns]) continue;
      const uint32_t begin = out;
      for (uint32_t i = g.begin; i < g.end; ++i) f[out++] = f[i];
      kept.push_back(FeatureGroup{g.ns, begin, out});
    }
    const uint32_t removed = ex.num_linear - out;
    if (opt_.keep_names) {
      uint32_t named = 0;
      for (const auto& g :
           ex.groups) {  // ex.groups still lists every linear group; keep the kept ones' names
        if (g.ns != kConstantNamespace && opt_.ignore_linear[g.ns]) continue;
        for (uint32_t i = g.begin; i < g.end; ++i, ++named)
          if (named != i) ex.names[named] = std::move(ex.names[i]);
      }
      ex.names.erase(ex.names.begin() + named, ex.names.begin() + ex.num_linear);
    }
    f.erase(f.begin() + out, f.begin() + ex.num_linear);
    ex.num_linear -= removed;
    ex.groups = std::move(kept);
  }
}

}  // namespace lepus
