// Output links (--link) and --binary, applied to the clipped prediction for printing only: the loss is
// always computed on the unlinked prediction, as VW does.
#pragma once
#include <cstdint>
#include <string>

namespace lepus {

enum class Link { kIdentity, kLogistic, kGlf1, kPoisson };

Link parse_link(const std::string& name);  // throws ConfigError
const char* link_name(Link link);
float apply_link(Link link, float p);

// v, or its replacement when it is not finite (NaN by 0, infinity by +-FLT_MAX), counted in `replaced`: -p, -r and
// the daemon never print NaN or infinity.
float finite_or_replaced(float v, uint64_t& replaced);
// A prediction's value as -p and the daemon print it: made finite, linked (--link), made finite again (poisson's
// exp overflows), or with --binary its sign as -1 or 1.
float shown_prediction(Link link, bool binary, float value, uint64_t& replaced);

}  // namespace lepus
