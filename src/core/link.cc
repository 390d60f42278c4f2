#include "core/link.h"

#include <cfloat>
#include <cmath>

#include "lepus/errors.h"

namespace lepus {

Link parse_link(const std::string& name) {
  if (name == "identity") return Link::kIdentity;
  if (name == "logistic") return Link::kLogistic;
  if (name == "glf1") return Link::kGlf1;
  if (name == "poisson") return Link::kPoisson;
  throw ConfigError("unknown --link '" + name + "' (choose one of: identity, logistic, glf1, poisson)");
}

const char* link_name(Link link) {
  switch (link) {
    case Link::kLogistic: return "logistic";
    case Link::kGlf1: return "glf1";
    case Link::kPoisson: return "poisson";
    default: return "identity";
  }
}

float apply_link(Link link, float p) {
  switch (link) {
    case Link::kLogistic: return 1.0f / (1.0f + std::exp(-p));
    case Link::kGlf1: return 2.0f / (1.0f + std::exp(-p)) - 1.0f;
    case Link::kPoisson: return std::exp(p);
    default: return p;
  }
}

float finite_or_replaced(float v, uint64_t& replaced) {
  if (std::isfinite(v)) [[likely]]
    return v;
  ++replaced;
  return std::isnan(v) ? 0.0f : std::copysign(FLT_MAX, v);
}

float shown_prediction(Link link, bool binary, float value, uint64_t& replaced) {
  value = finite_or_replaced(value, replaced);
  if (binary) return value > 0.0f ? 1.0f : -1.0f;
  return finite_or_replaced(apply_link(link, value), replaced);
}

}  // namespace lepus
