// --distributed: the figures the ranks of a job sum, at each synchronisation of a pass (Driver::sync, which also
// merges the learners and prints the table's shared rows) and once at the end of the run (the summary's). Each
// sum is a collective: every rank makes it as many times as every other (dist/collective.h).
#pragma once
#include "dist/collective.h"

namespace lepus {

struct RunStats;

// One synchronisation's figures: this rank's, or after summed() every rank's.
struct RankSums {
  double ended = 0.0;     // ranks at the end of their pass
  double stopping = 0.0;  // ranks that stop reading (--examples)
  double examples = 0.0, weighted_labeled = 0.0, weighted_unlabeled = 0.0, sum_loss = 0.0;
  double holdout_loss_total = 0.0, holdout_weight_total = 0.0;  // all passes
  double holdout_loss = 0.0, holdout_weight = 0.0;              // this pass
  RankSums summed(Collective& ranks) const;
};

// The summary's figures of `st` (examples, weights, losses, features, warnings) summed over the ranks.
void sum_over_ranks(Collective& ranks, RunStats& st);

}  // namespace lepus
