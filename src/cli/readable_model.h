// --readable_model and --invert_hash: the model as text. By default in VW 9.11.2's layout, so that scripts
// reading VW's files read lepus's: VW's header (Version, Id, label range, bits, lda, ngram, skip, options,
// the header's checksum), then sgd's text as VW's gd writes it (Learner::write_vw_readable), or another
// learner's own lines.
// --readable_full writes lepus's own layout instead: its header and every learner's full state.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/config.h"
#include "lepus/learner.h"
#include "pipeline/audit.h"

namespace lepus::cli {

// VW's readable-model header for a model of `learner` with these saved options, `bits` and label range: VW's
// options line holds the given options VW keeps in its models, as VW writes them (by name, VW's number
// format;
// --ignore, --ignore_linear and --keep merged at the end), then for another learner than sgd `--learner NAME`
// and that learner's given options. predict_only: VW's --predict_only_model, which keeps no learning options.
std::string vw_readable_header(const std::vector<SavedOption>& saved, const LearnerRow& learner, int bits,
                               LabelRange range, bool predict_only);

// Writes the readable model to `path` atomically (a temporary renamed over it). names: --invert_hash, each
// "slot:..." line then starts with the name of the first feature seen in that slot, where one is known.
void write_readable_model(const std::string& path, const Config& c, const Learner& learner,
                          const VwRunFigures& run,
                          const std::unordered_map<uint64_t, FeatureName>* names = nullptr);

}  // namespace lepus::cli
