// GzipReader: the inflate thread, its workers and the reader's side (see gzip_reader.h for the design).
#include "io/gzip_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr size_t kReadSize = size_t{1} << 18;      // one read(2) of compressed input
constexpr size_t kStreamChunk = size_t{1} << 18;   // a chunk of streaming output
constexpr size_t kJobOut = size_t{1} << 18;        // a job is closed once its output reaches this ...
constexpr size_t kJobIn = size_t{1} << 18;         // ... or its input this
constexpr size_t kMaxMemberOut = size_t{1} << 19;  // a BGZF member inflating to more goes streaming
constexpr size_t kMaxSpare = 8;                    // buffers kept for reuse

int default_workers() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 2u, 4u));
}

// A gzip header longer than this (a file name or comment of more than 64 KiB) is left to the inflater as it
// comes: reading on for its end could take a damaged file whole into memory.
constexpr size_t kMaxHeader = size_t{1} << 16;

// The length of the gzip member header at p[0, n) (RFC 1952, section 2.3.1), or 0 when those bytes do not hold
// all of it.
size_t gzip_header_size(const uint8_t* p, size_t n) {
  if (n < 10) return 0;
  const unsigned flags = p[3];
  size_t at = 10;
  if (flags & 4) {  // FEXTRA
    if (n < at + 2) return 0;
    at += 2 + (size_t{p[at]} | size_t{p[at + 1]} << 8);
  }
  for (unsigned zero_ended : {8u, 16u}) {  // FNAME, FCOMMENT
    if (!(flags & zero_ended)) continue;
    const void* z = at < n ? std::memchr(p + at, 0, n - at) : nullptr;
    if (z == nullptr) return 0;
    at = static_cast<size_t>(static_cast<const uint8_t*>(z) - p) + 1;
  }
  if (flags & 2) at += 2;  // FHCRC
  return at <= n ? at : 0;
}

// The start of a BGZF member: gzip's magic, deflate, FEXTRA, and a first extra subfield 'BC' of length 2.
bool is_bgzf_header(const std::string& h) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(h[i]); };
  return h.size() >= 16 && at(0) == 0x1f && at(1) == 0x8b && at(2) == 8 && (at(3) & 4) != 0 &&
         at(12) == 'B' && at(13) == 'C' && at(14) == 2 && at(15) == 0;
}

}  // namespace

// Reads a regular file's compressed bytes on a thread of its own, a few buffers ahead of the inflate thread.
// A single gzip stream is inflated on one core, so that core's time bounds the whole run: here the kernel's
// copy of the file (read(2)) leaves it, for the other core, which parses and has time to spare.
class GzipReader::ReadAhead {
 public:
  explicit ReadAhead(FdReader& fd) : fd_(fd), thread_([this] { run(); }) {}
  ~ReadAhead() {
    {
      const std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    room_.notify_one();
    thread_.join();
  }
  // Swaps the next buffer of input into buf (buf's storage is reused for a later read) and returns how many
  // bytes it holds; 0 at the end of the file. A failed read is thrown where it happened in the input.
  size_t take(ByteBuffer& buf) {
    std::unique_lock<std::mutex> lock(m_);
    ready_.wait(lock, [&] { return !full_.empty() || end_ || error_; });
    if (full_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return 0;
    }
    const size_t n = full_.front().second;
    free_.push_back(std::move(buf));
    buf = std::move(full_.front().first);
    full_.pop_front();
    // The reading thread waits for half the buffers to be free and reads them back to back: half the wake-ups.
    const bool wake = full_.size() <= kBuffers / 2;
    lock.unlock();
    if (wake) room_.notify_one();
    return n;
  }

 private:
  static constexpr size_t kBuffers = 4;  // 1 MiB of compressed input ahead (at 256 KiB a read)

  void run() {
    for (;;) {
      ByteBuffer b;
      {
        std::unique_lock<std::mutex> lock(m_);
        room_.wait(lock, [&] { return stop_ || full_.size() < kBuffers; });
        if (stop_) return;
        if (!free_.empty()) {
          b = std::move(free_.back());
          free_.pop_back();
        }
      }
      b.resize(kReadSize);
      size_t got = 0;
      std::exception_ptr error;
      try {
        got = fd_.read(b.data(), kReadSize);
      } catch (...) {
        error = std::current_exception();
      }
      {
        const std::lock_guard<std::mutex> lock(m_);
        if (error) {
          error_ = error;
        } else if (got == 0) {
          end_ = true;
        } else {
          full_.emplace_back(std::move(b), got);
        }
      }
      ready_.notify_one();
      if (error || got == 0) return;
    }
  }

  FdReader& fd_;  // read only by this thread once it runs
  std::mutex m_;
  std::condition_variable ready_, room_;
  std::deque<std::pair<ByteBuffer, size_t>> full_;  // read, in file order, with the bytes each holds
  std::vector<ByteBuffer> free_;
  bool end_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts once the members above exist
};

struct GzipReader::Chunk {
  enum class State { kPending, kReady, kRefused };
  State state = State::kReady;  // under m_ (a job is kPending until a worker has inflated it)
  ByteBuffer out;               // out[0, size) is this chunk's content
  size_t size = 0;
  std::exception_ptr error;  // damage after the content: thrown once the content is handed out
  bool end = false;          // the end of the stream (no content)
  // A job: BGZF members, their compressed bytes back to back in `in`, their content back to back in out.
  struct Member {
    size_t in_off, in_size, out_off, out_size;
  };
  ByteBuffer in;
  std::vector<Member> members;
};

GzipReader::GzipReader(std::unique_ptr<FdReader> fd, std::string name, GzipReaderOptions options)
    : fd_(std::move(fd)), opt_(std::move(options)) {
  name_ = std::move(name);
  workers_ = opt_.workers == 0 ? default_workers() : std::max(opt_.workers, 0);
  window_ = static_cast<size_t>(workers_) + 2;
  try {
    stream_ = MemberInflater::make(opt_.backend);
  } catch (const IoError& e) {
    throw IoError(name_ + ": " + e.what());
  }
  // A descriptor that can wait for a writer (pipe, terminal, socket) is polled together with a self-pipe,
  // so the destructor can wake the inflate thread out of a read that would never return.
  if (!fd_->regular() && ::pipe2(wake_, O_CLOEXEC) != 0) throw IoError(name_ + ": cannot create a pipe");
  // A regular file's first member tells whether the inflate thread will stream the whole input (a pipe is not
  // peeked here: its header may be slow to come, and the constructor must not wait for it).
  if (fd_->regular()) inflates_alone_ = workers_ == 0 || !is_bgzf_header(fd_->peek(16));
}

GzipReader::~GzipReader() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  to_inflater_.notify_all();
  to_workers_.notify_all();
  if (wake_[1] >= 0) {
    const char c = 0;
    [[maybe_unused]] const ssize_t w = ::write(wake_[1], &c, 1);
  }
  if (inflater_thread_.joinable()) inflater_thread_.join();
  for (auto& t : worker_threads_) t.join();  // started by the inflate thread, which has ended
  for (int f : wake_)
    if (f >= 0) ::close(f);
}

GzipReaderStats GzipReader::stats() const {
  const std::lock_guard<std::mutex> lock(m_);
  return stats_;
}

// ---- The reader's side -------------------------------------------------------------------------------

size_t GzipReader::read(char* buf, size_t n) {
  if (n == 0) return 0;
  for (;;) {
    if (current_) {
      if (current_pos_ < current_->size) {
        const size_t k = std::min(n, current_->size - current_pos_);
        std::memcpy(buf, current_->out.data() + current_pos_, k);
        current_pos_ += k;
        return k;
      }
      if (current_->error) std::rethrow_exception(current_->error);  // at every call from now on
      if (current_->end) return 0;
    }
    if (!started_) {
      inflater_thread_ = std::thread([this] { produce(); });
      started_ = true;
    }
    std::unique_lock<std::mutex> lock(m_);
    if (current_ && spare_.size() < kMaxSpare) spare_.push_back(std::move(current_->out));
    current_.reset();
    // Waits only when no byte is ready: the chunk at the front is still being inflated, or not there yet.
    to_reader_.wait(lock, [&] { return !queue_.empty() && queue_.front()->state == Chunk::State::kReady; });
    current_ = std::move(queue_.front());
    queue_.pop_front();
    current_pos_ = 0;
    lock.unlock();
    to_inflater_.notify_one();  // room in the queue
  }
}

// ---- The inflate thread ------------------------------------------------------------------------------

void GzipReader::produce() {
  try {
    run();
  } catch (const Stopped&) {
  } catch (...) {
    // Damage (CorruptInputError) or a failed read (IoError): handed out after the bytes before it.
    const std::exception_ptr e = std::current_exception();
    try {
      dispatch_group();  // the blocks gathered before a read failure come first
      std::unique_lock<std::mutex> lock(m_);
      to_inflater_.wait(lock, [&] { return stop_ || in_flight_ == 0; });
      if (stop_) return;
      if (failed_) {
        // A refused job precedes the error and could not be redone: the error takes its place (and the
        // streaming bytes, which come after it, go too). Only a read failure after damage gets here.
        const auto first = std::find_if(unchecked_.begin(), unchecked_.end(),
                                        [](const auto& c) { return c->state != Chunk::State::kReady; });
        for (auto it = first; it != unchecked_.end(); ++it)
          queue_.erase(std::find(queue_.begin(), queue_.end(), *it));
        if (out_) out_->size = 0;
      }
      auto c = out_ ? std::move(out_) : std::make_shared<Chunk>();
      c->error = e;
      queue_.push_back(std::move(c));  // past the window by one at most: the thread ends here
      lock.unlock();
      to_reader_.notify_one();
    } catch (const Stopped&) {
    } catch (...) {
      // Out of memory while reporting: the reader would wait for ever, so stop it on a bare error.
      const std::lock_guard<std::mutex> lock(m_);
      queue_.clear();
      auto c = std::make_shared<Chunk>();
      c->error = e;
      queue_.push_back(std::move(c));
      to_reader_.notify_one();
    }
  }
}

void GzipReader::run() {
  if (inflates_alone_) ahead_ = std::make_unique<ReadAhead>(*fd_);  // a regular file, inflated here alone
  // One member at a time: a whole BGZF block goes to a job; any other member is inflated here, streaming,
  // once every job before it has been accepted (or refused and taken back: then that member streams).
  for (;;) {
    if (!force_stream_ && workers_ > 0 && take_bgzf_block()) continue;
    settle_jobs();
    force_stream_ = false;
    if (!inflate_streaming_member()) return;
  }
}

// Takes the next member into the current job if it is a whole BGZF block within the limits. False (and
// nothing consumed) when the next member must stream: no BGZF header, the end of the input, a block cut
// short by the end, a block too big to hold.
bool GzipReader::take_bgzf_block() {
  bool refused;
  {
    const std::lock_guard<std::mutex> lock(m_);
    refused = failed_;
  }
  if (refused) {  // a job was refused: redo from there streaming rather than take more
    restart_from_failed_job();
    return true;
  }
  size_t size = 0;
  for (size_t need = 12;;) {
    const size_t have = ensure(need);
    const BgzfHeader h = scan_bgzf_header(reinterpret_cast<const uint8_t*>(in_.data() + pos_), have, &size);
    if (h == BgzfHeader::kOther) return false;
    if (h == BgzfHeader::kBgzf) break;
    if (have < need) return false;  // the input ends inside the header
    const uint8_t* h8 = reinterpret_cast<const uint8_t*>(in_.data() + pos_);
    need = 12 + (size_t{h8[10]} | size_t{h8[11]} << 8);  // the header with its whole extra field
  }
  if (ensure(size) < size) return false;
  const uint8_t* block = reinterpret_cast<const uint8_t*>(in_.data() + pos_);
  const size_t isize = load_le32(block + size - 4);
  if (isize > kMaxMemberOut) return false;
  if (worker_threads_.empty()) start_workers();
  if (!group_) group_ = new_chunk(0, true);
  Chunk& g = *group_;
  g.members.push_back({g.in.size(), size, g.size, isize});
  g.in.insert(g.in.end(), in_.data() + pos_, in_.data() + pos_ + size);
  g.size += isize;
  pos_ += size;
  if (g.size >= kJobOut || g.in.size() >= kJobIn) dispatch_group();
  return true;
}

// Hands the job being gathered to the workers (its chunk takes its place in the queue).
bool GzipReader::dispatch_group() {
  if (!group_) return false;
  std::shared_ptr<Chunk> job = std::move(group_);
  job->out.resize(std::max<size_t>(job->size, 1));  // at least one byte: out.data() is never null
  job->state = Chunk::State::kPending;
  flush_stream_chunk();  // whatever streamed before it comes first
  std::unique_lock<std::mutex> lock(m_);
  // Drop the accepted jobs from the front of the unchecked list: their compressed bytes are no longer needed.
  size_t accepted = 0;
  while (accepted < unchecked_.size() && unchecked_[accepted]->state == Chunk::State::kReady) {
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(unchecked_[accepted]->in));
    ++accepted;
  }
  unchecked_.erase(unchecked_.begin(), unchecked_.begin() + static_cast<long>(accepted));
  // Waits for room; a refused job wakes it too (the reader may be waiting on that job at the front):
  // the job then goes past the window by one, and the next take_bgzf_block redoes the refused one.
  to_inflater_.wait(lock, [&] { return stop_ || failed_ || queue_.size() < window_; });
  if (stop_) throw Stopped{};
  queue_.push_back(job);
  jobs_.push_back(job);
  unchecked_.push_back(std::move(job));
  ++in_flight_;
  lock.unlock();
  to_workers_.notify_one();
  return true;
}

// Waits until every job handed out is inflated; if one was refused, redoes from it.
void GzipReader::settle_jobs() {
  dispatch_group();
  std::unique_lock<std::mutex> lock(m_);
  to_inflater_.wait(lock, [&] { return stop_ || in_flight_ == 0; });
  if (stop_) throw Stopped{};
  if (failed_) {
    lock.unlock();
    restart_from_failed_job();
    return;
  }
  for (auto& c : unchecked_)
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(c->in));
  unchecked_.clear();
}

// The first refused job and every job after it are withdrawn from the queue (the reader has handed out
// none of them: it waits at the refused one), their compressed bytes go back in front of the input, and
// the next member streams. The streaming inflater then meets the damage where a serial reader would.
void GzipReader::restart_from_failed_job() {
  std::unique_lock<std::mutex> lock(m_);
  to_inflater_.wait(lock, [&] { return stop_ || in_flight_ == 0; });
  if (stop_) throw Stopped{};
  const auto first = std::find_if(unchecked_.begin(), unchecked_.end(),
                                  [](const auto& c) { return c->state != Chunk::State::kReady; });
  ByteBuffer back;
  for (auto it = first; it != unchecked_.end(); ++it) {
    back.insert(back.end(), (*it)->in.begin(), (*it)->in.end());
    queue_.erase(std::find(queue_.begin(), queue_.end(), *it));
  }
  failed_ = false;
  lock.unlock();
  unchecked_.clear();
  if (group_) {  // gathered but not handed out: it comes after the withdrawn jobs
    back.insert(back.end(), group_->in.begin(), group_->in.end());
    group_.reset();
  }
  back.insert(back.end(), in_.begin() + static_cast<long>(pos_), in_.begin() + static_cast<long>(end_));
  in_ = std::move(back);
  pos_ = 0;
  end_ = in_.size();
  force_stream_ = true;
}

// Inflates one member streaming into the output chunk. True when the member ended (checked) and another
// may follow; false at the clean end of the input (the end is queued). Damage is thrown (CorruptInputError)
// and queued by produce() after the bytes inflated before it.
bool GzipReader::inflate_streaming_member() {
  bool mid_member = false;
  // ISA-L's inflater fails on a gzip header cut short by the end of its input (zlib waits for more), so the whole
  // header is read first: a file name, say, may go past a short first read or a pipe's first bytes.
  for (size_t want = 10; want <= kMaxHeader;) {
    const size_t have = ensure(want);
    if (gzip_header_size(reinterpret_cast<const uint8_t*>(in_.data() + pos_), have) > 0 || have < want) break;
    want = have + 1;  // ensure reads what is there, a whole read at a time
  }
  for (;;) {
    if (pos_ == end_ && ensure(1) == 0) {
      if (mid_member) throw CorruptInputError(name_ + ": unexpected end of gzip data (truncated file)");
      flush_stream_chunk();
      auto end = std::make_shared<Chunk>();
      end->end = true;
      push(std::move(end), true);
      return false;
    }
    if (!out_) out_ = new_chunk(kStreamChunk, false);
    stream_->set_input(reinterpret_cast<const uint8_t*>(in_.data() + pos_), end_ - pos_);
    mid_member = true;
    const MemberInflater::Step s = stream_->inflate(reinterpret_cast<uint8_t*>(out_->out.data()) + out_->size,
                                                    out_->out.size() - out_->size);
    out_->size += s.produced;
    pos_ = end_ - stream_->avail_in();
    if (!s.error.empty()) throw CorruptInputError(name_ + s.error);
    if (out_->size == out_->out.size()) flush_stream_chunk();
    if (s.member_end) {
      const std::lock_guard<std::mutex> lock(m_);
      ++stats_.streamed_members;
      return true;
    }
  }
}

// Makes at least k bytes available in in_[pos_, end_) unless the input ends first; returns how many are.
// Before a read that would wait for a writer, hands out what is ready (a pipe delivering one line gets that
// line through at once).
size_t GzipReader::ensure(size_t k) {
  while (end_ - pos_ < k && !eof_) {
    if (!fd_->regular() && !fd_->buffered()) {
      pollfd p{fd_->fd(), POLLIN, 0};
      if (::poll(&p, 1, 0) == 0) {  // nothing to read now
        flush_stream_chunk();
        dispatch_group();
      }
    }
    if (!fill()) eof_ = true;
  }
  return end_ - pos_;
}

// One read of the descriptor appended to in_; false at the end of the input.
bool GzipReader::fill() {
  if (ahead_ && pos_ == end_) {  // all input consumed (as streaming inflation leaves it): no copy
    pos_ = 0;
    end_ = ahead_->take(in_);
    if (end_ > 0) count_read_ahead();
    return end_ > 0;
  }
  if (pos_ > 0 && (pos_ == end_ || pos_ >= in_.size() / 2)) {  // move the unread tail to the front
    std::memmove(in_.data(), in_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (in_.size() < end_ + kReadSize) in_.resize(end_ + kReadSize);
  if (wake_[0] >= 0 && !fd_->buffered()) {  // wait for input or for the destructor
    pollfd p[2] = {{fd_->fd(), POLLIN, 0}, {wake_[0], POLLIN, 0}};
    while (::poll(p, 2, -1) < 0) {
      if (errno != EINTR) throw IoError(name_ + ": poll failed: " + std::strerror(errno));
    }
    if (p[1].revents != 0) throw Stopped{};
  }
  size_t got = 0;
  if (ahead_) {  // bytes left over (a member's end, a header): the next buffer goes after them
    got = ahead_->take(ahead_spare_);
    if (got > 0) {  // at the end the spare may hold no buffer at all (data() null: memcpy must not see it)
      std::memcpy(in_.data() + end_, ahead_spare_.data(), got);
      count_read_ahead();
    }
  } else {
    got = fd_->read(in_.data() + end_, kReadSize);
  }
  end_ += got;
  return got > 0;
}

void GzipReader::count_read_ahead() {
  const std::lock_guard<std::mutex> lock(m_);
  ++stats_.read_ahead;
}

void GzipReader::flush_stream_chunk() {
  if (!out_ || out_->size == 0) return;
  push(std::move(out_), true);
  out_.reset();
}

// Queues a ready chunk, waiting for room in the window.
void GzipReader::push(std::shared_ptr<Chunk> c, bool wait_for_room) {
  std::unique_lock<std::mutex> lock(m_);
  if (wait_for_room) to_inflater_.wait(lock, [&] { return stop_ || queue_.size() < window_; });
  if (stop_) throw Stopped{};
  queue_.push_back(std::move(c));
  lock.unlock();
  to_reader_.notify_one();
}

// A ready chunk with an output buffer of `capacity` bytes, and for a job an empty input buffer (both reused
// when spare: no allocation and no page faults in the steady state).
std::shared_ptr<GzipReader::Chunk> GzipReader::new_chunk(size_t capacity, bool job) {
  auto c = std::make_shared<Chunk>();
  {
    const std::lock_guard<std::mutex> lock(m_);
    // The buffer spare the longest first: it has most likely left the cache of the core that read it, so filling
    // it does not have to take its lines back from that core (rows b and e of utl/bench, two runs of 15 interleaved
    // pairs each: 2-5% less time than reusing the newest).
    if (!spare_.empty()) {
      c->out = std::move(spare_.front());
      spare_.pop_front();
    }
    if (job && !spare_.empty()) {
      c->in = std::move(spare_.front());
      spare_.pop_front();
    }
  }
  c->out.resize(capacity);
  c->in.clear();
  return c;
}

void GzipReader::start_workers() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stats_.jobs_by_worker.assign(static_cast<size_t>(workers_), 0);
  }
  for (int i = 0; i < workers_; ++i) worker_threads_.emplace_back([this, i] { work(i); });
}

// A worker: inflates jobs, each member whole, and marks each accepted or refused.
void GzipReader::work(int id) {
  std::unique_ptr<MemberInflater> inflater;
  try {
    inflater = MemberInflater::make(opt_.backend);
  } catch (...) {
    // Without an inflater every job is refused, and the inflate thread streams them instead.
  }
  for (;;) {
    std::shared_ptr<Chunk> job;
    {
      std::unique_lock<std::mutex> lock(m_);
      to_workers_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    bool ok = inflater != nullptr;
    try {
      if (opt_.on_job) opt_.on_job(id);
      for (const auto& m : job->members) {
        if (!ok) break;
        ok = inflater->inflate_whole(reinterpret_cast<const uint8_t*>(job->in.data()) + m.in_off, m.in_size,
                                     reinterpret_cast<uint8_t*>(job->out.data()) + m.out_off, m.out_size);
      }
    } catch (...) {
      ok = false;
    }
    {
      const std::lock_guard<std::mutex> lock(m_);
      job->state = ok ? Chunk::State::kReady : Chunk::State::kRefused;
      ++stats_.jobs;
      ++stats_.jobs_by_worker[static_cast<size_t>(id)];
      if (ok) {
        stats_.parallel_members += job->members.size();
      } else {
        ++stats_.failed_jobs;
        failed_ = true;
      }
      --in_flight_;
    }
    to_reader_.notify_one();
    to_inflater_.notify_one();
  }
}

}  // namespace lepus
