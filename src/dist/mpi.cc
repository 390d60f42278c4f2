#include "dist/collective.h"

#ifdef LEPUS_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

namespace lepus {
namespace {

class MpiCollective final : public Collective {
 public:
  MpiCollective(int* argc, char*** argv, double timeout) : timeout_(timeout) {
    int ready = 0;
    MPI_Initialized(&ready);
    // Serialized: the sums come from whichever thread learns (--sync_every syncs from the learn stage, the
    // pass-end merge from the main thread), never two at once.
    int provided = 0;
    if (!ready && MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw IoError("--distributed: MPI_Init_thread failed");
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
      throw IoError("--distributed: this MPI library cannot be called from more than one thread "
                    "(MPI_THREAD_SERIALIZED)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCollective() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(double* v, size_t n) override { reduce(v, n, MPI_DOUBLE, MPI_SUM); }
  void sum(float* v, size_t n) override { reduce(v, n, MPI_FLOAT, MPI_SUM); }
  void max(double* v, size_t n) override { reduce(v, n, MPI_DOUBLE, MPI_MAX); }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    if (mine.size() > size_t{INT_MAX}) throw IoError("a vector too long to gather across ranks");
    std::vector<int> counts(static_cast<size_t>(size_));
    int count = static_cast<int>(mine.size());
    check(complete([&] { return MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD); },
                   [&](MPI_Request* r) {
                     return MPI_Iallgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD, r);
                   }),
          "MPI_Allgather");
    std::vector<int> at(counts.size());
    size_t total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      if (total > size_t{INT_MAX}) throw IoError("vectors too long to gather across ranks");
      at[r] = static_cast<int>(total);
      total += static_cast<size_t>(counts[r]);
    }
    if (total > size_t{INT_MAX}) throw IoError("vectors too long to gather across ranks");
    std::vector<double> all(std::max<size_t>(total, 1));
    check(complete(
              [&] {
                return MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), at.data(),
                                      MPI_DOUBLE, MPI_COMM_WORLD);
              },
              [&](MPI_Request* r) {
                return MPI_Iallgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), at.data(),
                                       MPI_DOUBLE, MPI_COMM_WORLD, r);
              }),
          "MPI_Allgatherv");
    std::vector<std::vector<double>> out(counts.size());
    for (size_t r = 0; r < counts.size(); ++r)
      out[r].assign(all.begin() + at[r], all.begin() + at[r] + counts[r]);
    return out;
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  void reduce(void* v, size_t n, MPI_Datatype type, MPI_Op op) {
    // MPI counts are int: long vectors go in chunks of 2^30 elements.
    const size_t chunk = size_t{1} << 30;
    const size_t width = type == MPI_DOUBLE ? sizeof(double) : sizeof(float);
    for (size_t at = 0; at < n; at += chunk) {
      const int count = static_cast<int>(std::min(chunk, n - at));
      char* p = static_cast<char*>(v) + at * width;
      check(complete([&] { return MPI_Allreduce(MPI_IN_PLACE, p, count, type, op, MPI_COMM_WORLD); },
                     [&](MPI_Request* r) {
                       return MPI_Iallreduce(MPI_IN_PLACE, p, count, type, op, MPI_COMM_WORLD, r);
                     }),
            "MPI_Allreduce");
    }
  }
  static void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw IoError(std::string(what) + " failed: " + std::string(text, length));  // main() names the rank
  }
  // One collective: blocking without a timeout; with one, started without blocking and polled, so that a wait
  // past the timeout can end the job. The poll spins at first (a sync whose ranks arrive together pays no sleep),
  // then sleeps 0.2 ms a turn.
  template <class Blocking, class Start>
  int complete(Blocking blocking, Start start) {
    if (!(timeout_ > 0.0)) return blocking();
    MPI_Request request;
    int rc = start(&request);
    if (rc != MPI_SUCCESS) return rc;
    const auto begun = std::chrono::steady_clock::now();
    for (long turn = 0;; ++turn) {
      int done = 0;
      rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS || done) return rc;
      if (turn < 10000) continue;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count() > timeout_) {
        std::ostringstream text;
        text << "the other ranks have not joined a synchronisation for " << timeout_
             << " s (--sync_timeout): a rank is stuck (a stalled read?) or far behind";
        throw IoError(text.str());
      }
    }
  }
  double timeout_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Collective> join_mpi(int* argc, char*** argv, double timeout_seconds) {
  return std::make_unique<MpiCollective>(argc, argv, timeout_seconds);
}
bool have_mpi() { return true; }

}  // namespace lepus

#else

namespace lepus {

std::unique_ptr<Collective> join_mpi(int*, char***, double) {
  throw ConfigError("--distributed needs Open MPI: this lepus was built without it (install libopenmpi-dev with "
                    "utl/setup, then rebuild)");
}
bool have_mpi() { return false; }

}  // namespace lepus

#endif
