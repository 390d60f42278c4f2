#include "cli/readable_model.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "io/safe_files.h"
#include "learners/common/plumbing.h"
#include "lepus/hashing.h"

namespace lepus::cli {
namespace {

// The options VW 9.11.2 keeps in a model (its options marked keep), with how VW writes each value. Those of
// its gd learner are kept only while VW saves the state to resume from, as it does unless
// --predict_only_model.
enum class Value { kFlag, kFloat, kInteger, kText };
struct Kept {
  Value value;
  bool learning = false;  // gd's own: kept only with the resume state
};
const std::map<std::string, Kept> kVwKept = {
    {"adaptive", {Value::kFlag, true}},
    {"csoaa", {Value::kInteger}},
    {"cubic", {Value::kText}},
    {"hash", {Value::kText}},
    {"hash_seed", {Value::kInteger}},
    {"indexing", {Value::kInteger}},
    {"interactions", {Value::kText}},
    {"invariant", {Value::kFlag, true}},
    {"learning_rate", {Value::kFloat, true}},
    {"named_labels", {Value::kText}},
    {"noconstant", {Value::kFlag}},
    {"normalized", {Value::kFlag, true}},
    {"oaa", {Value::kInteger}},
    {"power_t", {Value::kFloat, true}},
    {"quadratic", {Value::kText}},
    {"sgd", {Value::kFlag, true}},
};
// Namespace lists VW merges into one value of sorted, distinct namespaces, written after the others.
const char* const kVwMerged[] = {"ignore", "ignore_linear", "keep"};

// A number as VW's option serializer writes it (15 significant digits; a float option holds a float).
std::string vw_value(const std::string& text, Value kind) {
  std::istringstream in(text);
  std::ostringstream out;
  out.precision(15);
  if (kind == Value::kFloat) {
    float v = 0.0f;
    if (in >> v) out << v;
  } else if (kind == Value::kInteger) {
    long long v = 0;
    if (in >> v) out << v;
  }
  const std::string s = out.str();
  return s.empty() ? text : s;
}

}  // namespace

std::string vw_readable_header(const std::vector<SavedOption>& saved, const LearnerRow& learner, int bits,
                               LabelRange range, bool predict_only) {
  const bool sgd = learner.name == "sgd";
  std::multimap<std::string, std::string> kept;  // VW writes its options by name
  std::map<std::string, std::set<char>> merged;
  std::string own;   // another learner's: after VW's
  std::string seed;  // --random_seed
  std::set<std::string> learner_options;
  for (const auto& o : learner.options) learner_options.insert(o.name);
  for (const SavedOption& o : saved) {
    if (!o.given) continue;
    if (const auto k = kVwKept.find(o.name);
        k != kVwKept.end() && (!k->second.learning || (sgd && !predict_only))) {
      if (k->second.learning && !learner_options.count(o.name)) continue;
      std::string text;  // " value" (built by append: GCC 12 warns, wrongly, of an overlap in " " + string)
      if (k->second.value != Value::kFlag) text.append(" ").append(vw_value(o.value, k->second.value));
      kept.emplace(o.name, std::move(text));
    } else if (std::find(std::begin(kVwMerged), std::end(kVwMerged), o.name) != std::end(kVwMerged)) {
      merged[o.name].insert(o.value.begin(), o.value.end());
    } else if (o.name == "random_seed" && o.value != "0") {
      seed = " --random_seed " + o.value;  // VW appends its generator's state when it is not 0
    } else if (!sgd && learner_options.count(o.name)) {
      own += " --" + o.name + (o.value.empty() ? "" : " " + o.value);
    }
  }
  std::string options;
  for (const auto& [name, value] : kept) options += " --" + name + value;
  for (const char* name : kVwMerged)
    if (const auto m = merged.find(name); m != merged.end())
      options += std::string(" --") + name + " " + std::string(m->second.begin(), m->second.end());
  options += seed;
  if (!sgd) options += " --learner " + learner.name + own;

  std::vector<std::string> ngrams, skips;
  for (const SavedOption& o : saved) {
    if (o.name == "ngram") ngrams.push_back(o.value);
    if (o.name == "skips") skips.push_back(o.value);
  }
  // VW writes its header in pieces and chains a hash over them (murmur3, each piece's seed the hash so far):
  // the checksum a reader of VW's models verifies.
  std::vector<std::string> pieces;
  auto number = [](auto v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  pieces.push_back("Id \n");
  pieces.push_back("Min label:" + number(range.lo) + "\n");
  pieces.push_back("Max label:" + number(range.hi) + "\n");
  pieces.push_back("bits:" + std::to_string(bits) + "\n");
  pieces.push_back("lda:0\n");
  for (const auto* list : {&ngrams, &skips}) {
    pieces.push_back(std::to_string(list->size()) + (list == &ngrams ? " ngram:" : " skip:"));
    for (const std::string& v : *list) pieces.push_back(v + " ");
    pieces.push_back("\n");
  }
  pieces.push_back("options:" + options + "\n");
  uint32_t checksum = 0;
  std::string header = "Version 9.11.2\n";
  for (const std::string& p : pieces) {
    checksum = murmur3_32(p, checksum);
    header += p;
  }
  return header + "Checksum: " + std::to_string(checksum) + "\n";
}

void write_readable_model(const std::string& path, const Config& c, const Learner& learner,
                          const VwRunFigures& run, const std::unordered_map<uint64_t, FeatureName>* names) {
  write_text_atomically(path, [&](std::ostream& out) {  // a full disk leaves the previous file whole
    std::ostringstream body;
    if (c.readable_full) {
      out << "lepus " << LEPUS_VERSION << " readable model\n";
      out << "learner: " << learner.name() << "\n";
      out << "bits:" << c.bits << "\n";
      out << "options:";
      for (const auto& o : c.saved_options)
        if (o.given || o.name == "learner") out << " --" << o.name << (o.value.empty() ? "" : " " + o.value);
      out << "\n";
      common::imbue_exact_numbers(body);
      learner.write_readable(body);
    } else {
      out << vw_readable_header(c.saved_options, *find_learner(c.learner), c.bits, learner.label_range(),
                                c.predict_only_model);
      const auto* vw = dynamic_cast<const WritesVwText*>(&learner);
      if (!vw || !vw->write_vw_readable(body, run)) {  // a learner VW does not have: its own text, exact
        common::imbue_exact_numbers(body);
        learner.write_readable(body);
      }
    }
    if (names == nullptr) {
      out << body.str();
      return;
    }
    std::istringstream lines(body.str());
    for (std::string line; std::getline(lines, line);) {
      const size_t digits = line.find_first_not_of("0123456789");
      if (digits != 0 && digits != std::string::npos && line[digits] == ':') {
        const auto it = names->find(std::stoull(line.substr(0, digits)));
        if (it != names->end()) out << audit_name(it->second) << ':';
      }
      out << line << '\n';
    }
  });
}

}  // namespace lepus::cli
