// --distributed: the ranks of a data-parallel run, as the driver and the learners see them. Each rank reads its
// own shard and learns locally; at each synchronisation the ranks combine their models with sums over all ranks
// (MPI_Allreduce), each learner deciding what it sums and how it reads the sums back (Learner::merge).
#pragma once
#include <cstddef>
#include <cstdint>
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
};

// The MPI job this process belongs to (MPI_Init; one rank when started without mpirun). Throws ConfigError when
// lepus was built without Open MPI. Collective errors throw IoError instead of aborting (MPI_ERRORS_RETURN), and so
// does a sum or max that the other ranks have not all joined within `timeout_seconds` (0: no limit; a rank that is
// alive but stuck would otherwise hold the others for ever).
std::unique_ptr<Collective> join_mpi(int* argc, char*** argv, double timeout_seconds = 0.0);

// Whether this build can run --distributed.
bool have_mpi();

}  // namespace lepus
