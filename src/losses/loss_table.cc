// THE loss table: every --loss_function name and how to build it.
#include <functional>
#include <string>

#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

struct LossRow {
  const char* name;
  std::function<std::unique_ptr<Loss>(const LossOptions&)> make;
};

const LossRow kLossTable[] = {
    {"squared", [](const LossOptions&) { return std::make_unique<SquaredLoss>(); }},
    {"logistic",
     [](const LossOptions& o) { return std::make_unique<LogisticLoss>(o.logistic_min, o.logistic_max); }},
    {"hinge", [](const LossOptions&) { return std::make_unique<HingeLoss>(); }},
    {"quantile", [](const LossOptions& o) { return std::make_unique<QuantileLoss>(o.quantile_tau); }},
};

}  // namespace

std::unique_ptr<Loss> make_loss(const LossOptions& options) {
  for (const auto& row : kLossTable) {
    if (options.name == row.name) {
      if (options.name == "quantile" && !(options.quantile_tau > 0.0f && options.quantile_tau < 1.0f))
        throw ConfigError("--quantile_tau must be in (0, 1), got " + std::to_string(options.quantile_tau));
      return row.make(options);
    }
  }
  throw ConfigError("unknown --loss_function '" + options.name + "' (choose one of: " + loss_names() + ")");
}

std::string loss_names() {
  std::string out;
  for (const auto& row : kLossTable) {
    if (!out.empty()) out += ", ";
    out += row.name;
  }
  return out;
}

}  // namespace lepus
