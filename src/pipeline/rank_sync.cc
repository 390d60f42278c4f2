#include "pipeline/rank_sync.h"

#include <cstdint>

#include "pipeline/driver.h"

namespace lepus {

RankSums RankSums::summed(Collective& ranks) const {
  double v[10] = {ended,
                  stopping,
                  examples,
                  weighted_labeled,
                  weighted_unlabeled,
                  sum_loss,
                  holdout_loss_total,
                  holdout_weight_total,
                  holdout_loss,
                  holdout_weight};
  ranks.sum(v, 10);
  return RankSums{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
}

void sum_over_ranks(Collective& ranks, RunStats& st) {
  double v[7] = {static_cast<double>(st.examples),
                 st.weighted_labeled,
                 st.weighted_unlabeled,
                 st.sum_loss,
                 st.weighted_labels,
                 static_cast<double>(st.total_features),
                 static_cast<double>(st.warnings)};
  ranks.sum(v, 7);
  st.examples = static_cast<uint64_t>(v[0]);
  st.weighted_labeled = v[1];
  st.weighted_unlabeled = v[2];
  st.sum_loss = v[3];
  st.weighted_labels = v[4];
  st.total_features = static_cast<uint64_t>(v[5]);
  st.warnings = static_cast<uint64_t>(v[6]);
}

}  // namespace lepus
