// VW text format reader. The feature-section code mirrors VW 9.11.2's recursive-descent parser
// (text_parser/parse_example_text.cc: list_name_space / name_space / list_features / maybe_feature) step for
// step, because its odd corners (`d: e:x`, `a:|g`, value 0 dropped after the namespace weight, the
// rest-of-line drops) are part of what VW parity means. Grammar notes: vw_text.h.
#include "formats/vw_text.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "formats/float_reader.h"

namespace lepus {
namespace {

// Character classes of the grammar, one table lookup per byte in the hot loops.
enum : uint8_t {
  kNameEnd = 1,   // ends a namespace or feature name: space TAB ':' '|' '\r'
  kFieldEnd = 2,  // "nothing here" after a separator or a name: space TAB '|' '\r'
  kStrSpace = 4,  // whitespace around a string value: space TAB '\r' '\n'
};

constexpr std::array<uint8_t, 256> make_classes() {
  std::array<uint8_t, 256> c{};
  c[static_cast<unsigned char>(' ')] = kNameEnd | kFieldEnd | kStrSpace;
  c[static_cast<unsigned char>('\t')] = kNameEnd | kFieldEnd | kStrSpace;
  c[static_cast<unsigned char>('\r')] = kNameEnd | kFieldEnd | kStrSpace;
  c[static_cast<unsigned char>('|')] = kNameEnd | kFieldEnd;
  c[static_cast<unsigned char>(':')] = kNameEnd;
  c[static_cast<unsigned char>('\n')] = kStrSpace;
  return c;
}

constexpr std::array<uint8_t, 256> kClass = make_classes();

inline bool has_class(char c, uint8_t cls) { return (kClass[static_cast<unsigned char>(c)] & cls) != 0; }

// The 32 bytes at p, one bit per byte (bit i for p[i]): which are ASCII digits. SSE2 where there is SSE2 (every
// x86-64); elsewhere the same mask byte by byte.
inline uint32_t digit_mask32(const char* p) {
#if defined(__SSE2__)
  // c is a digit iff (c - '0') mod 256 < 10 unsigned, i.e. c + 0x50 (that minus 128) < -118 signed.
  const __m128i shift = _mm_set1_epi8(0x50);
  const __m128i limit = _mm_set1_epi8(-118);
  auto digits = [&](const char* q) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmplt_epi8(_mm_add_epi8(x, shift), limit)));
  };
  return digits(p) | (digits(p + 16) << 16);
#else
  uint32_t mask = 0;
  for (int i = 0; i < 32; ++i)
    mask |= static_cast<uint32_t>(static_cast<unsigned char>(p[i] - '0') < 10u) << i;
  return mask;
#endif
}

// Calls fn(token) for the first `count` space-separated tokens of the section (the label tokens: the tag,
// when there is one, is the last token and is not among them).
template <typename Fn>
void for_each_label_token(std::string_view section, size_t count, Fn&& fn) {
  const char* p = section.data();
  const char* const end = p + section.size();
  for (size_t taken = 0; p < end && taken < count;) {
    if (*p == ' ') {
      ++p;
      continue;
    }
    const char* start = p;
    while (p < end && *p != ' ') ++p;
    fn(std::string_view(start, static_cast<size_t>(p - start)));
    ++taken;
  }
}

// VW's message for a label with too many tokens, `what` naming the label type: "4 is too many tokens for a
// simple label: 1 2 3 4".
std::string too_many_tokens(std::string_view section, size_t count, const char* what) {
  std::string message = std::to_string(count) + " is too many tokens for a " + what + " label:";
  for_each_label_token(section, count, [&message](std::string_view token) {
    message += ' ';
    message.append(token);
  });
  return message;
}

// --oaa: `class [weight]`. A bad class leaves the example unlabeled (its features still count for
// prediction).
void parse_multiclass_label(std::string_view section, const std::string_view* tokens, size_t count,
                            const ParseOptions& options, Example& ex, WarningSink& warnings) {
  if (count == 0) return;
  if (count > 2) {  // no `initial`: VW's multiclass labels have none
    warnings.warn(too_many_tokens(section, count, "multiclass"));
    return;
  }
  uint32_t klass = 0;
  if (!read_class_label(tokens[0], options.named.get(), &klass, warnings)) return;
  if (count == 2) ex.weight = read_label_token(tokens[1], warnings);
  ex.labeled = true;
  ex.label = 0.0f;
  ex.classes.push_back(ClassCost{klass, 0.0f});
}

// --csoaa: `class[:cost] ...`, every token one class, in the order written; a class without a cost has an
// unknown cost (FLT_MAX, as in VW), and an example whose costs are all unknown is a test example: unlabeled,
// its classes kept (they are the candidates). The first bad token warns and leaves the example unlabeled with
// no classes.
void parse_cost_sensitive_label(std::string_view section, size_t count, const ParseOptions& options,
                                Example& ex, WarningSink& warnings) {
  bool bad = false;
  bool known = false;
  for_each_label_token(section, count, [&](std::string_view token) {
    if (bad) return;
    const size_t colon = token.find(':');
    uint32_t klass = 0;
    if (!read_class_label(token.substr(0, colon), options.named.get(), &klass, warnings)) {
      bad = true;
      return;
    }
    float cost = FLT_MAX;
    if (colon != std::string_view::npos) {
      const std::string_view text = token.substr(colon + 1);
      const char* const text_end = text.data() + text.size();
      const char* stop = nullptr;
      cost = read_vw_float(text.data(), text_end, &stop);
      // The whole rest must be one finite number: `1:`, `1:x`, `1:2:3` and `1:inf` are all refused.
      if (text.empty() || stop != text_end || !std::isfinite(cost)) {
        warnings.warn("bad cost in cost-sensitive label '" + std::string(token) + "' (class:cost expected)");
        bad = true;
        return;
      }
    }
    known |= cost != FLT_MAX;
    ex.classes.push_back(ClassCost{klass, cost});
  });
  if (bad) {
    ex.classes.clear();
    return;
  }
  ex.labeled = known;
}

void parse_label_section(std::string_view section, const ParseOptions& options, Example& ex,
                         WarningSink& warnings) {
  const size_t tab = section.find('\t');
  if (tab != std::string_view::npos) section.remove_prefix(tab + 1);

  // Only the first four tokens and the last one are ever needed (4+ tokens is an error whose message is
  // rebuilt below), so no container is filled.
  std::string_view tokens[4];
  std::string_view last;
  size_t count = 0;
  const char* p = section.data();
  const char* const end = p + section.size();
  while (p < end) {
    if (*p == ' ') {
      ++p;
      continue;
    }
    const char* start = p;
    while (p < end && *p != ' ') ++p;
    last = std::string_view(start, static_cast<size_t>(p - start));
    if (count < 4) tokens[count] = last;
    ++count;
  }
  if (count > 0 && (last.data() + last.size() == end || last.front() == '\'')) {
    if (last.front() == '\'') last.remove_prefix(1);
    ex.tag.assign(last.data(), last.size());
    --count;
  }

  switch (options.label_mode) {
    case LabelMode::kMulticlass:
      parse_multiclass_label(section, tokens, count, options, ex, warnings);
      return;
    case LabelMode::kCostSensitive: parse_cost_sensitive_label(section, count, options, ex, warnings); return;
    case LabelMode::kScalar: break;
  }

  switch (count) {
    case 0: return;
    case 1:
    case 2:
    case 3: {
      // In VW's order (label, weight, initial), which is the order of their warnings.
      // --positive_label: the label is compared as text (so "1.0" is not "1", and "M" is no bad float).
      const float label = options.has_positive_label ? (tokens[0] == options.positive_label ? 1.0f : -1.0f)
                                                     : read_label_token(tokens[0], warnings);
      if (count >= 2) ex.weight = read_label_token(tokens[1], warnings);
      if (count >= 3) ex.initial = read_label_token(tokens[2], warnings);
      // VW marks "no label" with FLT_MAX, so a label that reads as exactly FLT_MAX is unlabeled there too.
      ex.labeled = label != FLT_MAX;
      ex.label = ex.labeled ? label : 0.0f;
      return;
    }
    default: warnings.warn(too_many_tokens(section, count, "simple")); return;
  }
}

// kFast: features of the common shape `digits[:number]` under --hash strings take a whole-token path (the name's
// value read eight bytes at a time, the number by read_vw_float_fast) instead of the grammar's byte loops; any
// other feature, and any whose number is malformed or not finite, goes the general way from its start, so
// both instantiations give identical examples and warnings (parse_vw_line_general is the kFast = false one).
template <bool kFast>
class FeatureSectionParser {
 public:
  FeatureSectionParser(std::string_view section, const ParseOptions& options, Example& ex,
                       WarningSink& warnings)
      : begin_(section.data()),
        p_(section.data()),
        end_(section.data() + section.size()),
        options_(options),
        ex_(ex),
        warnings_(warnings),
        strings_(options.hash_mode == HashMode::kStrings),
        // VW gives the default namespace hash 0, or murmur3("", seed) under a seed, whatever --hash says.
        default_hash_(options.hash_seed == 0 ? 0u : murmur3_32(std::string_view(), options.hash_seed)) {}

  void run() {
    while (p_ < end_ && *p_ == '|') {
      ++p_;
      name_space();
    }
    if (p_ < end_ && *p_ != '\r') warn_here("malformed example! '|' or EOL expected after : \"");
    if (interleaved_) regroup();
  }

 private:
  void name_space() {
    ns_weight_ = 1.0f;
    anon_ = 0;
    const auto block_begin = static_cast<uint32_t>(ex_.features.size());
    if (p_ == end_ || has_class(*p_, kFieldEnd)) {
      group_ = static_cast<unsigned char>(' ');
      drop_ = options_.drop_group[group_];
      nshash_ = default_hash_;
      ns_name_ = {};
    } else if (*p_ != ':') {
      group_ = static_cast<unsigned char>(*p_);
      drop_ = options_.drop_group[group_];
      const char* name_begin = p_;
      while (p_ < end_ && !has_class(*p_, kNameEnd)) ++p_;
      ns_name_ = std::string_view(name_begin, static_cast<size_t>(p_ - name_begin));
      if (!drop_) {
        nshash_ = hash_feature(std::string_view(name_begin, static_cast<size_t>(p_ - name_begin)),
                               options_.hash_seed, options_.hash_mode);
      }
      if (p_ < end_ && *p_ == ':') {
        ++p_;
        const char* stop = nullptr;
        float weight = read_vw_float(p_, end_, &stop);
        // VW's check, spurious as it looks: it fires whenever the weight runs to the end of the line.
        if (stop >= end_) warn_here("malformed example! Float expected after : \"");
        if (!std::isfinite(weight)) {  // lepus: an infinite weight is malformed too
          weight = 1.0f;
          warn_rest("Invalid namespace value:\"", "\" read as NaN or infinity. Replacing with 1.");
        }
        p_ = stop;
        ns_weight_ = weight;
      }
    } else {
      // `|:...`: no namespace name. The caller then warns again and drops the rest of the line.
      warn_here("malformed example! '|',String,space, or EOL expected after : \"");
      return;
    }
    fast_ = kFast && strings_ && !drop_ && !options_.keep_names;
    list_features();
    close_block(block_begin);
  }

  void list_features() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) {
      ++p_;
      maybe_feature();
    }
    if (!(p_ == end_ || *p_ == '|' || *p_ == '\r')) {
      warn_here("malformed example! '|',space, or EOL expected after : \"");
    }
  }

  void maybe_feature() {
    if constexpr (kFast) {
      if (fast_ && fast_run()) return;
    }
    if (p_ == end_ || has_class(*p_, kFieldEnd)) return;
    const char* name_begin = p_;
    while (p_ < end_ && !has_class(*p_, kNameEnd)) ++p_;
    const std::string_view name(name_begin, static_cast<size_t>(p_ - name_begin));

    float value = ns_weight_;  // `name` alone: 1 times the namespace weight
    std::string_view str;
    if (p_ < end_ && *p_ == ':') {
      ++p_;
      const char* stop = nullptr;
      float x = read_vw_float(p_, end_, &stop);
      if (stop == p_) {
        // Not a number: a string value, which ignores the namespace weight.
        str = string_value();
        value = 1.0f;
      } else {
        if (!std::isfinite(x)) {  // lepus: an infinite value is malformed too (VW keeps it)
          x = 0.0f;
          warn_rest("Invalid feature value:\"", "\" read as NaN or infinity. Replacing with 0.");
        }
        value = ns_weight_ * x;
        if (!std::isfinite(value)) {
          value = 0.0f;
          warn_rest("Invalid feature value:\"", "\" times the namespace weight overflows. Replacing with 0.");
        }
        p_ = stop;
      }
    }
    if (drop_) return;

    uint64_t index;
    if (!str.empty()) {
      index = hash_feature(str, hash_feature(name, nshash_, options_.hash_mode), options_.hash_mode);
    } else if (!name.empty()) {
      index = hash_feature(name, nshash_, options_.hash_mode);
    } else {
      index = static_cast<uint64_t>(nshash_) + anon_++;  // counted even when the value turns out to be 0
    }
    if (value == 0.0f) return;
    ex_.features.push_back(Feature{index, value});
    if (options_.keep_names)
      ex_.names.push_back({NamePart{std::string(ns_name_), std::string(name), std::string(str)}});
  }

  // ---- the whole-feature fast path (kFast) -----------------------------------------------------------------
  // Features of the shape `digits` or `digits:number` (the number as read_vw_float_fast takes it) under --hash
  // strings, in a kept group. Such a name hashes to its decimal value (mod 2^64, truncated to 32 bits) plus the
  // namespace hash, so it is summed while it is scanned and never looked at again. Each function below handles
  // the feature at p and returns its end (p_ is not touched), or returns nullptr having changed nothing, and the
  // general path then reads that feature from its start, warnings and all.

  // A run of features from p_ (a feature's start): true, with p_ at the end of the last one handled, if at least
  // the first was; false otherwise.
  //
  // Features are written through out_ into room made at the example's end when the first one is written
  // (FeatureVector's resize leaves it unwritten), instead of a push_back each (its capacity test and size
  // update); the room not used is given back before the general path, which appends, runs.
  bool fast_run() { return ns_weight_ == 1.0f ? fast_run_as<false>() : fast_run_as<true>(); }
  template <bool kWeighted>  // the namespace's weight is not 1 (known once per run, not tested per feature)
  bool fast_run_as() {
    FeatureVector& fs = ex_.features;
    out_ = out_end_ = fs.data() + fs.size();
    room_bound_ =
        static_cast<size_t>(end_ - p_) / 2 + 1;  // features the section can hold (two bytes each at least)
    const char* p = p_;
    const char* done = nullptr;
    for (;;) {
      if (end_ - p >= 32) {
        // window_feature ends a feature only at a space or TAB in its window
        if (const char* stop = window_feature<kWeighted>(p)) {
          done = stop;
          p = stop + 1;
          continue;
        }
      }
      const char* stop = byte_feature(p);
      if (stop == nullptr) break;
      done = stop;
      if (stop == end_ || (*stop != ' ' && *stop != '\t')) break;
      p = stop + 1;  // past the separator, as list_features steps
    }
    fs.resize(static_cast<size_t>(out_ - fs.data()));
    if (done == nullptr) return false;
    p_ = done;
    return true;
  }

  // Room for kRoom more features at most, for no more than the section can hold, and within the example's
  // capacity while it has some: the capacity (which every example of a batch keeps) grows as push_back would grow
  // it, only once it is full.
  void make_room() {
    FeatureVector& fs = ex_.features;
    const size_t n = static_cast<size_t>(out_ - fs.data());
    size_t room = std::min(kRoom, room_bound_);
    if (fs.capacity() > n) room = std::min(room, fs.capacity() - n);
    fs.resize(n + room);
    out_ = fs.data() + n;
    out_end_ = out_ + room;
  }

  static constexpr size_t kRoom = 64;  // the most room made at once
  Feature* out_ = nullptr;             // fast_run's room: the next feature's place, and the room's end
  Feature* out_end_ = nullptr;
  size_t room_bound_ = 0;

  void push(uint64_t name_value, float value) {
    if (out_ == out_end_) [[unlikely]]
      make_room();
    *out_++ = Feature{static_cast<uint32_t>(static_cast<uint32_t>(name_value) + nshash_), value};
  }

  // Any fast-shaped feature, byte by byte (the last ones of a line, and what window_feature leaves).
  const char* byte_feature(const char* p) {
    const char* q = p;
    uint64_t name_value = 0;  // wraps mod 2^64, as VW's hashstring
    while (q < end_ && static_cast<unsigned char>(*q - '0') < 10) {
      name_value = name_value * 10 + static_cast<uint64_t>(*q++ - '0');
    }
    if (q == p) return nullptr;
    float value = ns_weight_;  // `name` alone: 1 times the namespace weight
    if (q < end_ && *q == ':') {
      float x;
      q = read_vw_float_fast(q + 1, end_, &x);
      if (q == nullptr) return nullptr;
      value = ns_weight_ * x;
      if (!std::isfinite(value)) return nullptr;  // the general path warns
    } else if (q < end_ && !has_class(*q, kFieldEnd)) {
      return nullptr;  // the name goes on: letters, or bytes such as '\v' that VW's hash trims
    }
    if (value != 0.0f) push(name_value, value);
    return q;
  }

  // The common case with 32 bytes readable at p: a name of 1 to 8 digits, and a number of at most 7 digits before
  // its point and 7 after, with at most 8 significant ones, and a power of ten from 10^-37 to 10^30, followed
  // by a space or TAB within the window. Each part's length is one count of trailing zeros in the window's digit
  // mask, and each digit run's value one SWAR step (with one digit before the point, the point's byte is
  // overwritten by that digit so the whole mantissa is one run). The value takes VW's steps in as few dependent
  // operations as possible: the mantissa less its last digit is exact (at most 2^24 - 48), so VW's accumulator
  // is that integer, and the last digit is one f32 step `acc * 10 + digit`, exact too when the mantissa is
  // small (and always for an integer, below 10^7). Whether the value is 0 or finite is known from the integers,
  // so no branch waits for the float. Anything else returns nullptr having written nothing (and fast_run gives
  // the feature to byte_feature).
  template <bool kWeighted>
  const char* window_feature(const char* const base) {
    using digits8::load;
    using digits8::value_of_first;
    const uint64_t other = ~static_cast<uint64_t>(digit_mask32(base));  // non-digits; bits 32 and up set
    const int k = std::countr_zero(other);                              // the name's digits
    if (k == 0 || k > 8 || base[k] != ':') return nullptr;
    // Where the next part starts is a chain from one feature to the next (the next feature starts where this one
    // ends), so the common cases below are branches, predicted, rather than positions computed from loaded bytes.
    int pos = k + 1;
    // A non-digit after the colon is a sign, known from the mask without waiting for a load; anything else than
    // '-' there (".5") is declined to byte_feature, by a branch off that chain.
    const auto sign = static_cast<int>((other >> pos) & 1);
    const bool negative = base[pos] == '-';
    if (sign != static_cast<int>(negative)) [[unlikely]]
      return nullptr;
    pos += sign;
    const int k1 = std::countr_zero(other >> pos);  // integer digits; pos <= 10
    int num_dec = 0;
    uint64_t all;                           // the mantissa's digits
    uint64_t name;                          // the name's value
    if (k1 == 1 && base[pos + 1] == '.') {  // "d.ddd": both runs at once
      const int frac = pos + 2;             // <= 12
      num_dec = std::countr_zero(other >> frac);
      if (num_dec > 7) return nullptr;
      const uint64_t word = load(base + frac - 1);  // the point, then the decimals
      digits8::values_of_first2(load(base), k,
                                (word & ~uint64_t{0xFF}) | static_cast<unsigned char>(base[pos]), num_dec + 1,
                                name, all);
      pos = frac + num_dec;
    } else {  // "ddd", "dd.ddd", "-.ddd"
      if (k1 > 7) return nullptr;
      all = value_of_first(load(base + pos), k1);  // pos + 8 <= 18
      pos += k1;
      if (base[pos] == '.') {  // pos <= 17
        const int frac = pos + 1;
        num_dec = std::countr_zero(other >> frac);
        if (num_dec > 7) return nullptr;
        static constexpr uint64_t kScale[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
        all = all * kScale[num_dec] + value_of_first(load(base + frac), num_dec);  // frac + 8 <= 26
        pos = frac + num_dec;
      }
      name = value_of_first(load(base), k);
    }
    if (k1 + num_dec == 0) return nullptr;  // no digit: VW's odd zeros
    const uint64_t head = all / 10;
    const auto last = static_cast<uint32_t>(all - head * 10);
    // With decimals the last digit is one; an integer here has at most 7 digits, so every step is exact.
    if (head > float_detail::kExactAccumulator) return nullptr;
    int exponent = 0;
    uint32_t e4;  // pos <= 25: four bytes of the window
    std::memcpy(&e4, base + pos, 4);
    if ((e4 & 0xFFDF) == 0x2D45 && ((other >> (pos + 2)) & 7) == 4) {  // "e-dd" or "E-dd", then a non-digit
      exponent = -static_cast<int>(((e4 >> 16) & 0xF) * 10 + ((e4 >> 24) & 0xF));
      pos += 4;
    } else if ((base[pos] | 0x20) == 'e') {  // only 'e' and 'E' map to 'e'
      ++pos;
      const bool exp_negative = base[pos] == '-';
      pos += exp_negative;
      const int exp_digits = std::countr_zero(other >> pos);  // pos + exp_digits <= 32
      if (exp_digits == 2) {                                  // the common case ("e-02"), without a loop
        exponent = (base[pos] - '0') * 10 + (base[pos + 1] - '0');
      } else {
        if (exp_digits > 6) return nullptr;  // read_vw_float saturates longer ones
        for (int i = 0; i < exp_digits; ++i) exponent = exponent * 10 + (base[pos + i] - '0');
      }
      pos += exp_digits;
      if (exp_negative) exponent = -exponent;
    }
    // The number must end at a separator inside the window: one that reaches the window's end may go on past
    // it, and one ending in anything else (strtof's cases, '|', '\r', '\n') is not of this shape.
    if (pos >= 32 || (base[pos] != ' ' && base[pos] != '\t')) return nullptr;
    const int true_e = exponent - num_dec;
    // |mantissa| < 2^24 * 10, so up to 10^30 the value is finite, and from 10^-37 (VW's table's last
    // non-zero power) it is 0 only when the mantissa is.
    if (true_e > 30 || true_e < -37) return nullptr;
    const float scaled = static_cast<float>(head) * 10.0f;  // VW's f32 step; separate statements: no FMA
    const float acc = scaled + static_cast<float>(last);
    const float magnitude = acc * float_detail::kPow10[static_cast<size_t>(true_e + 128)];
    const float x = negative ? -magnitude : magnitude;  // = sign * magnitude: magnitude is never a NaN
    bool zero = all == 0;
    float value = x;
    if constexpr (kWeighted) {  // else 1 * x == x
      value = ns_weight_ * x;
      if (!std::isfinite(value)) return nullptr;  // the general path warns
      zero = value == 0.0f;
    }
    if (!zero) push(name, value);
    return base + pos;
  }

  // VW's string_feature_value: skip leading whitespace, take the run up to the next whitespace. A rest that
  // is all whitespace yields an empty string and consumes nothing.
  std::string_view string_value() {
    const char* q = p_;
    while (q < end_ && has_class(*q, kStrSpace)) ++q;
    if (q == end_) return {};
    p_ = q;
    while (p_ < end_ && !has_class(*p_, kStrSpace)) ++p_;
    return std::string_view(q, static_cast<size_t>(p_ - q));
  }

  // Records the block's features as a run in ex.groups. A group that comes back after another one (`|a x |b y
  // |a z`) marks the line interleaved; the 256-entry seen table is only filled once a second group appears,
  // so single-namespace lines never touch it.
  void close_block(uint32_t block_begin) {
    const auto block_end = static_cast<uint32_t>(ex_.features.size());
    if (block_end == block_begin) return;
    auto& groups = ex_.groups;
    if (!groups.empty() && groups.back().ns == group_) {
      groups.back().end = block_end;
      return;
    }
    if (!groups.empty()) {
      if (!seen_ready_) {
        seen_.fill(false);
        for (const FeatureGroup& g : groups) seen_[g.ns] = true;
        seen_ready_ = true;
      }
      if (seen_[group_]) interleaved_ = true;
      seen_[group_] = true;
    }
    groups.push_back(FeatureGroup{group_, block_begin, block_end});
  }

  // Stable counting sort of the runs by group (order of first appearance), using the tail of ex.features as
  // the scratch area so no other buffer is needed.
  void regroup() {
    auto& features = ex_.features;
    auto& runs = ex_.groups;
    std::array<int16_t, 256> order;
    order.fill(-1);
    std::array<unsigned char, 256> group_of{};
    std::array<uint32_t, 256> count{};
    int num_groups = 0;
    for (const FeatureGroup& r : runs) {
      if (order[r.ns] < 0) {
        order[r.ns] = static_cast<int16_t>(num_groups);
        group_of[static_cast<size_t>(num_groups)] = r.ns;
        ++num_groups;
      }
      count[static_cast<size_t>(order[r.ns])] += r.end - r.begin;
    }
    std::array<uint32_t, 256> next{};
    uint32_t offset = 0;
    for (int k = 0; k < num_groups; ++k) {
      next[static_cast<size_t>(k)] = offset;
      offset += count[static_cast<size_t>(k)];
    }
    const size_t n = features.size();
    const bool names = !ex_.names.empty();
    features.resize(2 * n);
    if (names) ex_.names.resize(2 * n);
    for (const FeatureGroup& r : runs) {
      uint32_t& dst = next[static_cast<size_t>(order[r.ns])];
      std::copy(features.begin() + r.begin, features.begin() + r.end, features.begin() + n + dst);
      if (names)
        std::move(ex_.names.begin() + r.begin, ex_.names.begin() + r.end, ex_.names.begin() + n + dst);
      dst += r.end - r.begin;
    }
    std::copy(features.begin() + n, features.end(), features.begin());
    features.resize(n);
    if (names) {
      std::move(ex_.names.begin() + n, ex_.names.end(), ex_.names.begin());
      ex_.names.resize(n);
    }
    runs.clear();
    offset = 0;
    for (int k = 0; k < num_groups; ++k) {
      const uint32_t c = count[static_cast<size_t>(k)];
      runs.push_back(FeatureGroup{group_of[static_cast<size_t>(k)], offset, offset + c});
      offset += c;
    }
  }

  // VW's message: the text, then the feature section up to the current position, then a closing quote.
  void warn_here(const char* text) {
    std::string message = text;
    message.append(begin_, static_cast<size_t>(p_ - begin_));
    message += '"';
    warnings_.warn(message);
  }

  // VW's message for a NaN value: the text, the rest of the line from the value on, then the suffix.
  void warn_rest(const char* text, const char* suffix) {
    std::string message = text;
    message.append(p_, static_cast<size_t>(end_ - p_));
    message += suffix;
    warnings_.warn(message);
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  const ParseOptions& options_;
  Example& ex_;
  WarningSink& warnings_;
  const bool strings_;  // --hash strings
  const uint32_t default_hash_;

  // The current '|' block.
  unsigned char group_ = ' ';
  bool drop_ = false;
  bool fast_ = false;         // kFast, --hash strings and the block's group is kept (and no names are kept)
  std::string_view ns_name_;  // the block's namespace as written (names kept only)
  uint32_t nshash_ = 0;
  float ns_weight_ = 1.0f;
  uint64_t anon_ = 0;

  bool interleaved_ = false;
  bool seen_ready_ = false;
  std::array<bool, 256> seen_;  // filled on first use (see close_block)
};

template <bool kFast>
void parse_line(std::string_view line, const ParseOptions& options, Example& ex, WarningSink& warnings) {
  ex.clear();
  if (line.size() >= 3 && line[0] == '\xEF' && line[1] == '\xBB' && line[2] == '\xBF') line.remove_prefix(3);
  // The caller strips '\n'; dropping one more is harmless (lines never hold two) and matches VW's order.
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {
    ex.empty = true;
    return;
  }
  ex.label_kind = label_kind_of(options.label_mode);
  const void* bar = std::memchr(line.data(), '|', line.size());
  const size_t bar_index =
      bar == nullptr ? line.size() : static_cast<size_t>(static_cast<const char*>(bar) - line.data());
  if (bar_index != 0) parse_label_section(line.substr(0, bar_index), options, ex, warnings);
  if (bar_index < line.size()) {
    FeatureSectionParser<kFast> parser(line.substr(bar_index), options, ex, warnings);
    parser.run();
  }
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
}

}  // namespace

void parse_vw_line(std::string_view line, const ParseOptions& options, Example& ex, WarningSink& warnings) {
  parse_line<true>(line, options, ex, warnings);
}

void parse_vw_line_general(std::string_view line, const ParseOptions& options, Example& ex,
                           WarningSink& warnings) {
  parse_line<false>(line, options, ex, warnings);
}

}  // namespace lepus
