// --distributed: the ranks of a data-parallel run, as the driver and the learners see them. Each rank reads its
// own shard and learns locally; at each synchronisation the ranks combine their models with sums over all ranks
// (MPI_Allreduce), each learner deciding what it sums and how it reads the sums back (Learner::merge).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "lepus/errors.h"

namespace lepus {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: v[i] becomes the sum of v[i] over every rank. Collective: every rank calls it with the same n.
  virtual void sum(double* v, size_t n) = 0;
  virtual void sum(float* v, size_t n) = 0;
  // In place: v[i] becomes the largest v[i] over every rank. Collective, as sum().
  virtual void max(double* v, size_t n) = 0;
  // Every rank's vector, in rank order (their lengths may differ). Collective, as sum().
  virtual std::vector<std::vector<double>> gather(const std::vector<double>& mine) = 0;
  // Ends every rank of the job at once (a rank that cannot go on must not leave the others waiting in a sum).
  [[noreturn]] virtual void abort(int code) = 0;
  // A sign of life, from the thread that learns (cheap: it says so at most 5 times a second). A rank that
  // neither joins a synchronisation nor shows life for the sync timeout is stuck (SyncTimeout).
  virtual void alive() {}
  // This rank is busy with work of its own (rank 0 writing the model) until its next sign of life: the others
  // do not count the time against it.
  virtual void busy() {}
};

// --sync_timeout: when a synchronisation ends the job because a rank is stuck. A rank is stuck when the
// others wait for it in a synchronisation and it has neither joined nor shown a sign of life
// (Collective::alive) for `limit` seconds: a rank reading or learning is never stuck, however long its shard
// takes.
struct SyncTimeout {
  enum class Mode { kNone, kFixed, kAuto };
  Mode mode = Mode::kAuto;
  double seconds = 0.0;  // kFixed: the limit
};
// kAuto: the limit is the longest silence of a live rank seen so far in the job (between its signs of life: a
// merge's computation, a long batch), times kSyncTimeoutFactor, and never under kSyncTimeoutFloor seconds.
inline constexpr double kSyncTimeoutFloor = 60.0;
inline constexpr double kSyncTimeoutFactor = 10.0;
inline double sync_timeout_limit(const SyncTimeout& t, double longest_silence_seen) {
  if (t.mode == SyncTimeout::Mode::kNone) return std::numeric_limits<double>::infinity();
  if (t.mode == SyncTimeout::Mode::kFixed) return t.seconds;
  return std::max(kSyncTimeoutFloor, kSyncTimeoutFactor * longest_silence_seen);
}

// The MPI job this process belongs to (MPI_Init; one rank when started without mpirun). Throws ConfigError
// when lepus was built without Open MPI. Collective errors throw IoError instead of aborting
// (MPI_ERRORS_RETURN), and so does a synchronisation that waits for a stuck rank (SyncTimeout; the message
// names the rank). Without a limit (kNone) a rank that is alive but stuck holds the others for ever.
std::unique_ptr<Collective> join_mpi(int* argc, char*** argv, SyncTimeout timeout = {});

// Whether this build can run --distributed.
bool have_mpi();

}  // namespace lepus
