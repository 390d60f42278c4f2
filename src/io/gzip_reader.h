// gzip input inflated off the reader's thread, BGZF members side by side.
//
// GzipReader is the InputSource for gzip data (any number of concatenated members). Its read() only copies
// bytes out of ready buffers: a thread of its own (the inflate thread, started at the first read) reads the
// descriptor and inflates, and hands the output over through a small bounded queue of chunks, in stream
// order. So the pipeline's reader stage does not wait on inflation while a chunk is ready.
//
// Members whose header carries BGZF's 'BC' subfield (bgzip, htslib) have a known size; the inflate thread
// cuts such members out of the input, groups them into jobs of about 256 KiB of output, and worker
// threads inflate the jobs concurrently, each member checked whole (it must end exactly at its BGZF size,
// inflate to its ISIZE, and match its CRC32). The chunks of the jobs stay in input order in the queue.
// Any other member (plain gzip, a multi-member file without BGZF sizes, a member too big or cut short by
// the end of the input) is inflated on the inflate thread itself, streaming: there a member's end is
// only known by inflating it, so it cannot be handed out ahead.
//
// Damage: a job whose member fails any check is not trusted. The inflate thread waits for the jobs in
// flight, takes back the compressed bytes from that job on, drops those jobs' chunks (none of them was
// handed out: the queue is in order) and inflates from there streaming, exactly as a serial reader would.
// So truncated or corrupt input fails at the same point of the byte stream with the same message as a
// serial reader: the bytes inflated before the damage are handed out first, then read() throws
// CorruptInputError (and again at every later call).
//
// Memory: at most `window` (workers + 2) chunks of at most ~0.75 MiB each are queued (plus one job's compressed
// bytes each), and one read buffer (or the read-ahead's five): a few MiB. (Jobs of 256 KiB and a window of
// workers + 2 took BGZF rcv1x200's peak from 22 to 17 MB, below VW's 19.5, at the same speed as 512 KiB and
// workers + 4.)
//
// Read-ahead: when the inflate thread inflates a regular file alone (its first member is not BGZF), one more
// thread reads the compressed bytes up to four 256 KiB buffers ahead, and the inflater takes each buffer whole
// (no copy, unless bytes of the last one are left over: a member's end, a header). One core's inflation bounds
// such a file's speed, and the kernel's copy (read(2)) was 3-4% of that core's time. rcv1x200 gzip -1, two runs
// of 21 interleaved pairs: medians 0.519 -> 0.510 s and 0.481 -> 0.471 s.
//
// Threads: the inflate thread, the read-ahead thread, and the workers, started at the first BGZF member. The
// destructor stops and joins them all on every path (a read waiting on a pipe is woken through a self-pipe).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/byte_buffer.h"
#include "io/fd_reader.h"
#include "io/gzip_inflate.h"
#include "io/input_source.h"

namespace lepus {

struct GzipReaderOptions {
  GzipBackend backend = GzipBackend::kZlib;
  int workers = 0;  // threads inflating BGZF jobs; 0: the cores', between 2 and 4; < 0: none (all streaming)
  // Test hook: called by a worker (0 .. workers-1) when it takes a job, before it inflates it.
  std::function<void(int worker)> on_job;
};

// What the reader did, for tests and diagnostics.
struct GzipReaderStats {
  uint64_t parallel_members = 0;  // members inflated whole by the workers (and accepted)
  uint64_t jobs = 0;              // jobs the workers inflated (accepted or not)
  uint64_t failed_jobs = 0;       // jobs refused (damage or a BGZF size that lied): redone streaming
  uint64_t streamed_members = 0;  // members inflated streaming on the inflate thread (whole ones)
  uint64_t read_ahead = 0;        // buffers of compressed input taken from the read-ahead thread
  std::vector<uint64_t> jobs_by_worker;
};

// InputSource::open with the gzip reader's options spelled out (InputSource::open picks the defaults).
std::unique_ptr<InputSource> open_input(const std::string& path, const GzipReaderOptions& options);

class GzipReader final : public InputSource {
 public:
  GzipReader(std::unique_ptr<FdReader> fd, std::string name, GzipReaderOptions options);
  ~GzipReader() override;
  size_t read(char* buf, size_t n) override;
  bool inflates_alone() const override { return inflates_alone_; }
  GzipReaderStats stats() const;

 private:
  struct Chunk;
  class ReadAhead;
  struct Stopped {};  // thrown inside the inflate thread when the reader is destroyed

  // The inflate thread.
  void produce();
  void run();
  bool take_bgzf_block();
  bool inflate_streaming_member();
  bool dispatch_group();
  void settle_jobs();
  void restart_from_failed_job();
  size_t ensure(size_t k);
  bool fill();
  void count_read_ahead();
  void flush_stream_chunk();
  void push(std::shared_ptr<Chunk> c, bool wait_for_room);
  std::shared_ptr<Chunk> new_chunk(size_t capacity, bool job);
  void start_workers();
  void work(int id);

  std::unique_ptr<FdReader> fd_;
  GzipReaderOptions opt_;
  int workers_;
  bool inflates_alone_ = false;  // a regular file whose first member is not BGZF (or no workers)
  size_t window_;

  // Shared state, under m_.
  mutable std::mutex m_;
  std::condition_variable to_reader_, to_inflater_, to_workers_;
  std::deque<std::shared_ptr<Chunk>> queue_;  // output in stream order; the reader takes the front when ready
  std::deque<std::shared_ptr<Chunk>> jobs_;   // jobs waiting for a worker
  size_t in_flight_ = 0;                      // jobs queued or being inflated
  bool failed_ = false;                       // a job was refused and not yet redone
  bool stop_ = false;
  std::deque<ByteBuffer> spare_;  // buffers to reuse, the longest spare first
  GzipReaderStats stats_;

  // The reader's side (the thread that calls read()).
  std::shared_ptr<Chunk> current_;
  size_t current_pos_ = 0;
  bool started_ = false;

  // The inflate thread's side.
  std::thread inflater_thread_;
  std::vector<std::thread> worker_threads_;
  std::unique_ptr<MemberInflater> stream_;  // the streaming inflater
  ByteBuffer in_;                           // compressed input; in_[pos_, end_) is not yet consumed
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::shared_ptr<Chunk> out_;                     // the streaming output chunk being filled
  std::shared_ptr<Chunk> group_;                   // the BGZF job being gathered
  std::vector<std::shared_ptr<Chunk>> unchecked_;  // jobs handed out, oldest first, not yet seen accepted
  bool force_stream_ = false;                      // the next member goes streaming (a job was refused there)
  int wake_[2] = {-1, -1};                         // self-pipe: wakes the inflate thread out of poll on stop
  std::unique_ptr<ReadAhead> ahead_;  // reads a regular file ahead when this thread inflates it alone
  ByteBuffer ahead_spare_;            // a read-ahead buffer copied after left-over input
};

}  // namespace lepus
