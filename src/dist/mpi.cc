#include "dist/collective.h"

#ifdef LEPUS_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <sstream>
#include <string>
#include <thread>

namespace lepus {
namespace {

class MpiCollective final : public Collective {
 public:
  MpiCollective(int* argc, char*** argv, SyncTimeout timeout) : timeout_(timeout) {
    int ready = 0;
    MPI_Initialized(&ready);
    // Serialized: the sums come from whichever thread learns (--sync_every syncs from the learn stage, the
    // pass-end merge from the main thread), never two at once.
    int provided = 0;
    if (!ready && MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw IoError("--distributed: MPI_Init_thread failed");
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
      throw IoError(
          "--distributed: this MPI library cannot be called from more than one thread "
          "(MPI_THREAD_SERIALIZED)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    watching_ = size_ > 1 && timeout_.mode != SyncTimeout::Mode::kNone;
    if (watching_) {
      // Signs of life travel on a communicator of their own, between rank 0 and each other rank.
      MPI_Comm_dup(MPI_COMM_WORLD, &beats_);
      const auto now = Clock::now();
      peers_.assign(static_cast<size_t>(size_), Peer{now, 0, false});
      last_beat_ = now;
    }
  }
  ~MpiCollective() override {
    if (watching_) {
      drain();
      for (Outgoing& o : sent_) {
        int done = 0;
        MPI_Testall(static_cast<int>(o.requests.size()), o.requests.data(), &done, MPI_STATUSES_IGNORE);
        if (!done)
          for (MPI_Request& r : o.requests)
            if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      }
    }
    MPI_Finalize();
  }
  void alive() override {
    if (!watching_ || Clock::now() - last_beat_ < kBeatEvery) return;
    beat(joined_);
    drain();
  }
  void busy() override {
    if (watching_) beat(-joined_ - 1);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(double* v, size_t n) override { reduce(v, n, MPI_DOUBLE, MPI_SUM); }
  void sum(float* v, size_t n) override { reduce(v, n, MPI_FLOAT, MPI_SUM); }
  void max(double* v, size_t n) override { reduce(v, n, MPI_DOUBLE, MPI_MAX); }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    if (mine.size() > size_t{INT_MAX}) throw IoError("a vector too long to gather across ranks");
    std::vector<int> counts(static_cast<size_t>(size_));
    int count = static_cast<int>(mine.size());
    check(
        complete([&] { return MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD); },
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
  using Clock = std::chrono::steady_clock;
  // Often enough that a limit of a few seconds never meets a live rank's gap between two signs of life; rank
  // 0 hears from every rank that often.
  static constexpr auto kBeatEvery = std::chrono::milliseconds(200);
  static constexpr int kBeatTag = 43;
  static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

  // What this rank last heard from a peer (rank 0 hears every rank; the others hear rank 0).
  struct Peer {
    Clock::time_point heard;  // its last sign of life (the job's start before any)
    int64_t joined = 0;       // the synchronisations it has joined
    bool busy = false;        // busy with work of its own since its last message
  };
  struct Outgoing {
    int64_t value;
    std::vector<MPI_Request> requests;
  };

  // Tells the peers this rank's state: v >= 0, alive and v synchronisations joined; v < 0, busy, -v - 1
  // joined.
  void beat(int64_t v) {
    while (!sent_.empty()) {  // the sends that completed (small messages complete at once)
      int done = 0;
      MPI_Testall(static_cast<int>(sent_.front().requests.size()), sent_.front().requests.data(), &done,
                  MPI_STATUSES_IGNORE);
      if (!done) break;
      sent_.pop_front();
    }
    sent_.push_back(Outgoing{v, {}});
    Outgoing& o = sent_.back();
    for (int r = rank_ == 0 ? 1 : 0; r < (rank_ == 0 ? size_ : 1); ++r) {
      o.requests.emplace_back();
      if (MPI_Isend(&o.value, 1, MPI_INT64_T, r, kBeatTag, beats_, &o.requests.back()) != MPI_SUCCESS)
        o.requests.back() = MPI_REQUEST_NULL;
    }
    last_beat_ = Clock::now();
  }
  // Reads every message that has arrived; the longest silence of a live peer so far sets the automatic limit.
  void drain() {
    for (;;) {
      int flag = 0;
      MPI_Status status;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kBeatTag, beats_, &flag, &status) != MPI_SUCCESS || !flag) return;
      int64_t v = 0;
      if (MPI_Recv(&v, 1, MPI_INT64_T, status.MPI_SOURCE, kBeatTag, beats_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return;
      Peer& p = peers_[static_cast<size_t>(status.MPI_SOURCE)];
      const auto now = Clock::now();
      if (!p.busy) longest_silence_ = std::max(longest_silence_, seconds(now - p.heard));
      p.heard = now;
      p.busy = v < 0;
      p.joined = std::max(p.joined, v < 0 ? -v - 1 : v);
    }
  }
  // Throws IoError naming the ranks that have not joined this synchronisation and have been silent past the
  // limit (rank 0 judges every rank; another rank judges rank 0, whose own judgement covers the rest).
  void check_stuck() {
    const double limit = sync_timeout_limit(timeout_, longest_silence_);
    const auto now = Clock::now();
    std::ostringstream stuck;
    double silent = 0.0;
    int count = 0;
    for (int r = 0; r < (rank_ == 0 ? size_ : 1); ++r) {
      const Peer& p = peers_[static_cast<size_t>(r)];
      if (r == rank_ || p.joined >= joined_ || p.busy) continue;
      const double s = seconds(now - p.heard);
      if (s < limit) continue;
      stuck << (count++ ? ", " : "") << r;
      silent = std::max(silent, s);
    }
    if (count == 0) return;
    std::ostringstream text;
    text.precision(3);
    text << (count == 1 ? "rank " : "ranks ") << stuck.str() << (count == 1 ? " is" : " are")
         << " stuck: not in synchronisation " << joined_ << " with the others and no sign of life for "
         << silent << " s (--sync_timeout ";
    if (timeout_.mode == SyncTimeout::Mode::kFixed) {
      text << timeout_.seconds;
    } else {
      text << "auto: " << limit << " s, the longest silence seen (" << longest_silence_ << " s) times "
           << kSyncTimeoutFactor << ", at least " << kSyncTimeoutFloor << " s";
    }
    text << "; --sync_timeout 0 waits for ever)";
    throw IoError(text.str());
  }
  // One collective: blocking when nothing is watched; else started without blocking and polled, this rank's
  // arrival and signs of life told to its peers and theirs read, so that a wait for a stuck rank can end the
  // job naming it. The poll spins at first (a sync whose ranks arrive together pays no sleep), then sleeps
  // 0.2 ms a turn.
  template <class Blocking, class Start>
  int complete(Blocking blocking, Start start) {
    if (!watching_) return blocking();
    beat(++joined_);
    MPI_Request request;
    int rc = start(&request);
    if (rc != MPI_SUCCESS) return rc;
    for (long turn = 0;; ++turn) {
      int done = 0;
      rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS || done) return rc;
      if (turn < 10000) continue;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (turn % 50 != 0) continue;  // every 10 ms or so
      drain();
      if (Clock::now() - last_beat_ >= kBeatEvery) beat(joined_);
      check_stuck();
    }
  }
  SyncTimeout timeout_;
  int rank_ = 0;
  int size_ = 1;
  bool watching_ = false;  // several ranks and a limit: signs of life are exchanged
  MPI_Comm beats_ = MPI_COMM_NULL;
  std::vector<Peer> peers_;
  std::deque<Outgoing> sent_;
  Clock::time_point last_beat_;
  int64_t joined_ = 0;  // the synchronisations this rank has joined
  double longest_silence_ = 0.0;
};

}  // namespace

std::unique_ptr<Collective> join_mpi(int* argc, char*** argv, SyncTimeout timeout) {
  return std::make_unique<MpiCollective>(argc, argv, timeout);
}
bool have_mpi() { return true; }

}  // namespace lepus

#else

namespace lepus {

std::unique_ptr<Collective> join_mpi(int*, char***, SyncTimeout) {
  throw ConfigError(
      "--distributed needs Open MPI: this lepus was built without it (install libopenmpi-dev with "
      "utl/setup, then rebuild)");
}
bool have_mpi() { return false; }

}  // namespace lepus

#endif
