// Output links (--link) and --binary, applied to the clipped prediction for printing only: the loss is
// always computed on the unlinked prediction, as VW does.
#pragma once
#include <string>

namespace lepus {

enum class Link { kIdentity, kLogistic, kGlf1, kPoisson };

Link parse_link(const std::string& name);  // throws ConfigError
const char* link_name(Link link);
float apply_link(Link link, float p);

}  // namespace lepus
