#include "pipeline/audit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lepus/errors.h"

namespace lepus {

namespace {

// A float as C++ streams print it by default (6 significant digits, %g), which is how VW prints audit figures.
std::string g6(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

std::string pad(std::string s, size_t width, bool left) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string audit_name(const FeatureName& name) {
  std::string out;
  bool first = true;
  for (const NamePart& part : name) {
    if (part.ns.empty() && part.name.empty() && part.str.empty()) continue;
    if (!first) out += '*';
    first = false;
    if (!part.ns.empty() && part.ns != " ") out += part.ns + '^';
    out += part.name;
    if (!part.str.empty()) out += '^' + part.str;
  }
  return out;
}

std::string regressor_name(const FeatureName& name) {
  std::string out;
  bool first = true;
  for (const NamePart& part : name) {
    if (part.name.empty()) continue;
    if (!first) out += '*';
    first = false;
    if (!part.ns.empty() && part.ns != " ") out += part.ns + '^';
    out += part.name;
  }
  return out;
}

Auditor::Auditor(const AuditOptions& options, const Learner& learner, std::ostream* log)
    : opt_(options), learner_(learner), log_(log), mask_((uint64_t{1} << options.bits) - 1) {
  slots_ = dynamic_cast<const AuditsSlots*>(&learner_);
  per_slot_ = slots_ != nullptr;
  if (opt_.audit && !per_slot_ && log_)
    *log_ << "--audit: learner " << learner_.name()
          << " keeps no weight per slot; each feature's name, slot and value are shown\n";
  if (opt_.audit_regressor.empty()) return;
  if (!per_slot_)
    throw ConfigError("--audit_regressor needs a learner with a weight per slot; " +
                      std::string(learner_.name()) +
                      " has none (--invert_hash and --audit show its feature names)");
  const std::optional<uint64_t> stored = slots_->nonzero_weights();
  if (!stored)
    throw ConfigError("--audit_regressor lists stored weights; " + std::string(learner_.name()) +
                      " computes its weights from per-slot statistics (--audit and --invert_hash show them)");
  nonzero_ = *stored;
  if (nonzero_ == 0)
    throw ConfigError("--audit_regressor: the model has no nonzero weights; nothing to audit");
  regressor_ = std::make_unique<std::ofstream>(opt_.audit_regressor, std::ios::binary | std::ios::trunc);
  if (!*regressor_) throw IoError(opt_.audit_regressor + ": cannot open for writing");
  written_.assign(mask_ + 1, false);
  if (log_)
    *log_ << "Regressor contains " << nonzero_ << " values\n"
          << pad("example", 8, true) << ' ' << pad("values", 9, false) << ' ' << pad("total", 12, false)
          << "\n"
          << pad("counter", 8, true) << ' ' << pad("audited", 9, false) << ' ' << pad("progress", 12, false)
          << "\n";
}

Auditor::~Auditor() = default;

void Auditor::before(const Example& ex, bool first_pass) {
  static const FeatureName kNoName;
  auto name_of = [&](size_t k) -> const FeatureName& { return k < ex.names.size() ? ex.names[k] : kNoName; };
  // A linear feature's group (an interaction's: -1), for learners that scale by namespace.
  auto group_of = [&](size_t k) {
    for (const FeatureGroup& g : ex.groups)
      if (k >= g.begin && k < g.end) return static_cast<int>(g.ns);
    return -1;
  };
  if (opt_.invert_hash && (first_pass || opt_.test_only)) {
    for (size_t k = 0; k < ex.features.size(); ++k)
      names_.try_emplace(ex.features[k].index & mask_, name_of(k));
  }
  if (opt_.audit) {
    // VW's print_features: "\tname:slot:value:weight[@state]" per feature, stably sorted by |stored weight *
    // value|, largest first.
    struct Item {
      float key;
      std::string text;
    };
    std::vector<Item> items;
    items.reserve(ex.features.size());
    // Features of one example sharing a slot (repeats, collisions) are one coordinate to a learner that sums
    // them: its weight is asked for at their summed value.
    std::unordered_map<uint64_t, float> slot_value;
    if (per_slot_)
      for (const Feature& f : ex.features) slot_value[f.index & mask_] += f.value;
    for (size_t k = 0; k < ex.features.size(); ++k) {
      const Feature& f = ex.features[k];
      std::string text = audit_name(name_of(k)) + ':' + std::to_string(f.index & mask_) + ':' + g6(f.value);
      float key = 0.0f;
      if (per_slot_) {
        const SlotAudit s = slots_->audit_slot(Feature{f.index, slot_value[f.index & mask_]}, group_of(k));
        text += ':' + g6(s.weight);
        if (s.state) text += '@' + g6(*s.state);
        key = s.stored * f.value;
      }
      items.push_back(Item{std::fabs(key), std::move(text)});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key > b.key; });
    line_.clear();
    for (const Item& i : items) line_ += '\t' + i.text;
    line_ += '\n';
  }
  if (regressor_) {
    ++examples_;
    for (size_t k = 0; k < ex.features.size() && audited_ < nonzero_; ++k) {
      const uint64_t slot = ex.features[k].index & mask_;
      if (written_[slot]) continue;
      const SlotAudit s = slots_->audit_slot(ex.features[k], group_of(k));
      if (s.stored == 0.0f) continue;
      written_[slot] = true;
      ++audited_;
      *regressor_ << regressor_name(name_of(k)) << ':' << slot << ':' << g6(s.stored) << '\n';
    }
    // VW's table: a row at examples 1, 2, 4, ..., and one when the last weight is found.
    bool shown = false;
    if (static_cast<double>(examples_) >= next_row_) {
      regressor_row(examples_, audited_ * 100 / nonzero_);
      next_row_ *= 2.0;
      shown = true;
    }
    if (audited_ == nonzero_ && !last_row_shown_) {
      if (!shown) regressor_row(examples_, 100);
      last_row_shown_ = true;
    }
  }
}

void Auditor::regressor_row(uint64_t example, uint64_t percent) {
  if (!log_) return;
  *log_ << pad(std::to_string(example), 8, true) << ' ' << pad(std::to_string(audited_), 9, false) << ' '
        << pad(std::to_string(percent) + "%", 12, false) << "\n";
}

void Auditor::after(float prediction, const std::string& tag) {
  if (!opt_.audit) return;
  // VW's print_result_by_ref: an integer without decimals, otherwise six.
  char buf[64];
  if (std::floor(prediction) == prediction) {
    std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(prediction));
  } else {
    std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(prediction));
  }
  std::string out = buf;
  if (!tag.empty()) out += ' ' + tag;
  out += '\n';
  out += line_;
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size())
    throw IoError("--audit: writing stdout failed");
}

std::string Auditor::finish() {
  if (!regressor_) return "";
  regressor_->flush();
  if (!*regressor_) throw IoError(opt_.audit_regressor + ": write failed");
  if (audited_ < nonzero_)
    return "Note: for some reason audit couldn't find all regressor values in dataset (" +
           std::to_string(audited_) + " of " + std::to_string(nonzero_) + " found).\n";
  return "";
}

}  // namespace lepus
