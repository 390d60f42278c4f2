// The gzip reader (io/gzip_reader.h): the same bytes as the data for every layout of members (one, many,
// empty ones, BGZF with or without its EOF block, BGZF mixed with plain members), BGZF blocks inflated by
// more than one worker, damage inside a window of parallel jobs failing exactly as a serial reader fails,
// a pipe getting each member through at once, and the threads stopped when the reader goes early.
// BGZF files are written here with zlib's deflate (a gzip member whose extra field 'BC' holds its size - 1).
#include "io/gzip_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "io/block_reader.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

using namespace std::chrono_literals;

// ---- Writing gzip ----------------------------------------------------------------------------------------

std::string raw_deflate(const std::string& s, int level) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, s.size()) + 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void put_le(std::string& s, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

// One gzip member of s; with bgzf, its header carries the 'BC' subfield (BSIZE = member size - 1).
std::string member(const std::string& s, bool bgzf, int level = 1) {
  const std::string body = raw_deflate(s, level);
  std::string m = "\x1f\x8b\x08";
  m += static_cast<char>(bgzf ? 0x04 : 0x00);  // FLG: FEXTRA
  put_le(m, 0, 4);                             // MTIME
  m += '\0';                                   // XFL
  m += '\xff';                                 // OS: unknown
  if (bgzf) {
    put_le(m, 6, 2);  // XLEN
    m += "BC";
    put_le(m, 2, 2);
    const size_t total = m.size() + 2 + body.size() + 8;
    EXPECT_LE(total, 65536u);
    put_le(m, static_cast<uint32_t>(total - 1), 2);
  }
  m += body;
  put_le(
      m,
      static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size()))),
      4);
  put_le(m, static_cast<uint32_t>(s.size()), 4);
  return m;
}

// BGZF as bgzip writes it: blocks of 0xff00 bytes of content, then (optionally) the empty EOF block.
std::string bgzf(const std::string& s, size_t block = 0xff00, bool eof_block = true) {
  std::string out;
  for (size_t i = 0; i < s.size(); i += block) out += member(s.substr(i, block), true);
  if (eof_block) out += member("", true);
  return out;
}

// Sizes of the members of a BGZF file, in order.
std::vector<size_t> bgzf_blocks(const std::string& f) {
  std::vector<size_t> sizes;
  for (size_t p = 0; p < f.size();) {
    size_t size = 0;
    EXPECT_EQ(scan_bgzf_header(reinterpret_cast<const uint8_t*>(f.data()) + p, f.size() - p, &size),
              BgzfHeader::kBgzf);
    sizes.push_back(size);
    p += size;
  }
  return sizes;
}

// Text lines as a data file has them; deterministic.
std::string lines(size_t n, uint32_t seed = 1) {
  std::string s;
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    s += (x >> 31) ? "1" : "-1";
    s += " |f a:" + std::to_string(x % 1000) + " b" + std::to_string((x >> 10) % 97) +
         " c:" + std::to_string((x >> 20) % 13) + ".5\n";
  }
  return s;
}

// ---- Reading ----------------------------------------------------------------------------------------------

struct Outcome {
  std::string bytes;
  std::string error;  // CorruptInputError's text, "" if the input read to its end
  bool operator==(const Outcome& o) const { return bytes == o.bytes && error == o.error; }
};

Outcome read_all(InputSource& s, size_t chunk) {
  Outcome o;
  std::vector<char> buf(chunk);
  try {
    for (;;) {
      const size_t n = s.read(buf.data(), buf.size());
      if (n == 0) break;
      o.bytes.append(buf.data(), n);
    }
  } catch (const CorruptInputError& e) {
    o.error = e.what();
    EXPECT_THROW(s.read(buf.data(), buf.size()), CorruptInputError);  // and again at every later call
  }
  return o;
}

class GzipReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lepus_gzr_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  static std::vector<GzipBackend> backends() {
    std::vector<GzipBackend> b{GzipBackend::kZlib};
    if (MemberInflater::have_isal_backend()) b.push_back(GzipBackend::kIsal);
    return b;
  }
  static Outcome read_file(const std::string& path, GzipBackend backend, int workers, size_t chunk,
                           GzipReaderStats* stats = nullptr) {
    GzipReaderOptions o;
    o.backend = backend;
    o.workers = workers;
    auto s = open_input(path, o);
    Outcome out = read_all(*s, chunk);
    if (stats) *stats = dynamic_cast<GzipReader&>(*s).stats();
    return out;
  }
  std::filesystem::path dir_;
};

TEST(BgzfHeader, ScanTellsBgzfFromOtherMembers) {
  const std::string b = member("hello\n", true), g = member("hello\n", false);
  const auto* bp = reinterpret_cast<const uint8_t*>(b.data());
  const auto* gp = reinterpret_cast<const uint8_t*>(g.data());
  size_t size = 0;
  EXPECT_EQ(scan_bgzf_header(bp, b.size(), &size), BgzfHeader::kBgzf);
  EXPECT_EQ(size, b.size());
  EXPECT_EQ(scan_bgzf_header(bp, 11, &size), BgzfHeader::kNeedMore);
  EXPECT_EQ(scan_bgzf_header(bp, 17, &size), BgzfHeader::kNeedMore);  // the extra field is cut
  EXPECT_EQ(scan_bgzf_header(bp, 18, &size), BgzfHeader::kBgzf);
  EXPECT_EQ(scan_bgzf_header(gp, g.size(), &size), BgzfHeader::kOther);  // no FEXTRA
  EXPECT_EQ(scan_bgzf_header(gp, 4, &size), BgzfHeader::kOther);
  const std::string garbage = "garbage after gzip";
  EXPECT_EQ(scan_bgzf_header(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), &size),
            BgzfHeader::kOther);
  std::string reserved = b;
  reserved[3] = static_cast<char>(0x04 | 0x20);  // a reserved flag: left to the inflater to refuse
  EXPECT_EQ(scan_bgzf_header(reinterpret_cast<const uint8_t*>(reserved.data()), reserved.size(), &size),
            BgzfHeader::kOther);
  std::string other_id = b;
  other_id[13] = 'X';  // an extra subfield that is not 'BC'
  EXPECT_EQ(scan_bgzf_header(reinterpret_cast<const uint8_t*>(other_id.data()), other_id.size(), &size),
            BgzfHeader::kOther);
}

TEST(MemberInflater, WholeMemberIsCheckedForSizeEndCrcAndIsize) {
  const std::string text = lines(500);
  const std::string m = member(text, true);
  for (GzipBackend backend : {GzipBackend::kZlib, GzipBackend::kIsal}) {
    if (backend == GzipBackend::kIsal && !MemberInflater::have_isal_backend()) continue;
    auto inf = MemberInflater::make(backend);
    auto whole = [&](const std::string& in, size_t size) {
      std::vector<uint8_t> out(size + 1);
      return inf->inflate_whole(reinterpret_cast<const uint8_t*>(in.data()), in.size(), out.data(), size) &&
             std::string(out.begin(), out.begin() + static_cast<long>(size)) == text.substr(0, size);
    };
    EXPECT_TRUE(whole(m, text.size()));
    EXPECT_FALSE(whole(m, text.size() - 1));                      // runs on past the size given
    EXPECT_FALSE(whole(m, text.size() + 1));                      // ends short of it
    EXPECT_FALSE(whole(m.substr(0, m.size() - 1), text.size()));  // cut short
    EXPECT_FALSE(whole(m + member("x", true), text.size()));      // another member follows
    std::string crc = m;
    crc[crc.size() - 8] ^= 1;
    EXPECT_FALSE(whole(crc, text.size()));
    std::string isize = m;
    isize[isize.size() - 1] ^= 1;
    EXPECT_FALSE(whole(isize, text.size()));
    EXPECT_TRUE(whole(m, text.size()));  // and the inflater is as good as new after refusals
    const std::string empty = member("", true);
    uint8_t none;
    EXPECT_TRUE(inf->inflate_whole(reinterpret_cast<const uint8_t*>(empty.data()), empty.size(), &none, 0));
  }
}

// Every layout gives the data's bytes, whatever the read size, serially (workers -1) and in parallel.
TEST_F(GzipReaderTest, SameBytesForEveryLayoutOfMembers) {
  const std::string text = lines(60000);  // ~2 MB: many chunks, many jobs
  const std::string small = lines(300, 7);
  std::string many_members, empties;
  for (size_t i = 0; i < small.size(); i += 1000) many_members += member(small.substr(i, 1000), false);
  empties = member("", false) + member(small, false) + member("", false) + member("", true);
  std::string mixed = bgzf(text.substr(0, 500000), 0xff00, false) +
                      member(text.substr(500000, 300000), false) + member("", true) +
                      bgzf(text.substr(800000), 30000, true);
  std::string bgzf_empty_blocks = bgzf(small.substr(0, 5000), 0xff00, false);
  for (int i = 0; i < 3; ++i) bgzf_empty_blocks += member("", true);
  bgzf_empty_blocks += bgzf(small.substr(5000));
  const struct Case {
    std::string name, file, content;
  } cases[] = {
      {"single", member(text, false, 6), text},
      {"many_members", many_members, small},
      {"empty_members", empties, small},
      {"only_empty", member("", false) + member("", true), ""},
      {"bgzf_eof", bgzf(text), text},
      {"bgzf_no_eof", bgzf(text, 0xff00, false), text},
      {"bgzf_small_blocks", bgzf(small, 100), small},
      {"bgzf_empty_blocks", bgzf_empty_blocks, small},
      {"mixed", mixed, text},
  };
  for (const Case& c : cases) {
    const std::string path = write(c.name + ".gz", c.file);
    for (GzipBackend backend : backends()) {
      for (int workers : {-1, 1, 2}) {
        for (size_t chunk : {size_t{1} << 20, size_t{4093}}) {
          SCOPED_TRACE(c.name + " backend " + std::to_string(static_cast<int>(backend)) + " workers " +
                       std::to_string(workers) + " chunk " + std::to_string(chunk));
          const Outcome o = read_file(path, backend, workers, chunk);
          EXPECT_EQ(o.error, "");
          EXPECT_TRUE(o.bytes == c.content) << o.bytes.size() << " bytes, expected " << c.content.size();
        }
      }
    }
    // Through InputSource::open as the driver opens it, and a BlockReader: blocks of whole lines.
    BlockReader r(InputSource::open(path), 4096);
    ByteBuffer b;
    std::string all;
    while (r.next(b)) {
      if (all.size() + b.size() < c.content.size()) {
        EXPECT_EQ(b.back(), '\n');
      }
      all.append(b.begin(), b.end());
    }
    EXPECT_TRUE(all == c.content) << c.name;
  }
  // Tiny reads over a small BGZF file: the chunk boundaries fall everywhere.
  const std::string path = write("tiny.gz", bgzf(small, 777));
  EXPECT_TRUE(read_file(path, GzipBackend::kZlib, 2, 7).bytes == small);
}

// Whether the inflate thread streams the whole file (the pipeline then parses on one thread less): a plain gzip
// member first, or no workers; not for BGZF, nor for a file that is not gzip.
TEST_F(GzipReaderTest, KnowsWhenOneThreadInflatesTheWholeFile) {
  const std::string text = lines(1000);
  const std::string plain = write("plain.gz", member(text, false));
  const std::string blocked = write("blocked.gz", bgzf(text));
  const std::string raw = write("raw.vw", text);
  GzipReaderOptions o;
  o.workers = 2;
  EXPECT_TRUE(open_input(plain, o)->inflates_alone());
  EXPECT_FALSE(open_input(blocked, o)->inflates_alone());
  EXPECT_FALSE(open_input(raw, o)->inflates_alone());
  o.workers = -1;
  EXPECT_TRUE(open_input(blocked, o)->inflates_alone());
  auto s = open_input(plain, o);  // and reading is unchanged
  EXPECT_TRUE(read_all(*s, 4096).bytes == text);
}

// A regular file that the inflate thread inflates alone is read ahead on a thread of its own, in buffers of
// 256 KiB taken whole; bytes left over when a buffer runs out (here a member header whose file name spans the
// first full buffer's end) are joined to the next buffer. The same bytes come out; BGZF is not read ahead.
TEST_F(GzipReaderTest, ReadsAheadWhenItInflatesARegularFileAlone) {
  const std::string text = lines(60000);
  // The reader's first read returns the 16 bytes it peeked at; the next ones 256 KiB each.
  const size_t boundary = 16 + (size_t{1} << 18);
  size_t n = 1000;
  std::string first = member(lines(n, 3), false);
  while (first.size() < boundary - 60000) first = member(lines(n += 1000, 3), false);
  ASSERT_LT(first.size(), boundary - 100);
  std::string second = member(text, false);
  // The second member with FNAME: a zero-ended name across the boundary, within the reader's 64 KiB header cap.
  second[3] = static_cast<char>(second[3] | 0x08);
  const size_t name = boundary + 50 - (first.size() + 10);
  ASSERT_LT(name + 11, size_t{1} << 16);
  second.insert(10, std::string(name, 'n') + '\0');
  const struct Case {
    std::string name, file, content;
  } cases[] = {
      {"one_member", member(text, false), text},
      {"header_across_buffers", first + second, lines(n, 3) + text},
  };
  for (const Case& c : cases) {
    const std::string path = write(c.name + ".gz", c.file);
    for (GzipBackend backend : backends()) {
      SCOPED_TRACE(c.name + " backend " + std::to_string(static_cast<int>(backend)));
      GzipReaderStats stats;
      const Outcome o = read_file(path, backend, 2, 4093, &stats);
      EXPECT_EQ(o.error, "");
      EXPECT_TRUE(o.bytes == c.content) << o.bytes.size() << " bytes, expected " << c.content.size();
      EXPECT_GE(stats.read_ahead, (c.file.size() - 16) / (size_t{1} << 18) + 1);
    }
  }
  // Bytes after the last member, too few for a header: the left-over path meets the end of the file (where the
  // spare buffer is still empty: the sanitizer build checks that no null pointer reaches memcpy).
  for (GzipBackend backend : backends()) {
    const Outcome o = read_file(write("garbage.gz", member(text, false) + "garbage"), backend, 2, 4093);
    EXPECT_TRUE(o.bytes == text);
    // Damage after the content, in zlib's words or igzip's.
    const bool damaged = o.error.find(": corrupt gzip data") != std::string::npos ||
                         o.error.find(": unexpected end of gzip data") != std::string::npos;
    EXPECT_TRUE(damaged) << o.error;
  }
  GzipReaderStats stats;
  EXPECT_TRUE(read_file(write("blocks.gz", bgzf(text)), GzipBackend::kZlib, 2, 4093, &stats).bytes == text);
  EXPECT_EQ(stats.read_ahead, 0u);
}

// BGZF blocks are cut out of the input and inflated by more than one worker: worker 0 holds its first job
// until worker 1 has taken one (a serial reader would never get there and fail the counts).
TEST_F(GzipReaderTest, BgzfBlocksAreInflatedByMoreThanOneWorker) {
  const std::string text = lines(100000);  // ~3.4 MB: 52 blocks, ~14 jobs
  const std::string file = bgzf(text);
  const std::string path = write("big.bgz", file);
  const size_t blocks = bgzf_blocks(file).size();
  for (GzipBackend backend : backends()) {
    // Each worker's first job waits until the other has taken one too: whichever is scheduled first (under
    // load, worker 1 could otherwise take every job before worker 0 runs), both end up with a job.
    std::mutex m;
    std::condition_variable cv;
    bool started[2] = {false, false};
    GzipReaderOptions o;
    o.backend = backend;
    o.workers = 2;
    o.on_job = [&](int worker) {
      std::unique_lock<std::mutex> lock(m);
      started[worker] = true;
      cv.notify_all();
      cv.wait_for(lock, 60s, [&] { return started[0] && started[1]; });
    };
    auto s = open_input(path, o);
    const Outcome out = read_all(*s, 100000);
    EXPECT_EQ(out.error, "");
    EXPECT_TRUE(out.bytes == text);
    const GzipReaderStats st = dynamic_cast<GzipReader&>(*s).stats();
    EXPECT_EQ(st.parallel_members, blocks);
    EXPECT_EQ(st.streamed_members, 0u);
    EXPECT_EQ(st.failed_jobs, 0u);
    EXPECT_GE(st.jobs, 2u);
    ASSERT_EQ(st.jobs_by_worker.size(), 2u);
    EXPECT_GT(st.jobs_by_worker[0], 0u);
    EXPECT_GT(st.jobs_by_worker[1], 0u);
  }
  // A plain gzip file (one member) streams on the inflate thread; no job.
  const std::string plain = write("plain.gz", member(text, false));
  GzipReaderStats st;
  EXPECT_TRUE(read_file(plain, GzipBackend::kZlib, 2, 65536, &st).bytes == text);
  EXPECT_EQ(st.jobs, 0u);
  EXPECT_EQ(st.streamed_members, 1u);
}

// Damage to one BGZF block in the middle of a window of parallel jobs: the same bytes and the same message
// as the serial reader (workers -1, the streaming inflater alone, as lepus read gzip before), and all the
// bytes of the blocks before the damaged one. A BC size that lies is no damage: the bytes are the data's.
TEST_F(GzipReaderTest, DamageInAParallelWindowFailsLikeASerialReader) {
  const std::string text = lines(100000);  // ~2.4 MB: 36 blocks
  const std::string file = bgzf(text);
  const auto sizes = bgzf_blocks(file);
  ASSERT_GT(sizes.size(), 30u);
  const size_t k = 19;  // the damaged block: inside the third job, with jobs on either side in flight
  size_t start = 0;
  for (size_t i = 0; i < k; ++i) start += sizes[i];
  const size_t end = start + sizes[k];
  const std::string before = text.substr(0, k * 0xff00);  // the content of the blocks before it
  const std::string through = text.substr(0, (k + 1) * 0xff00);
  struct Damage {
    std::string name, file, must_contain;
    std::string exact;  // when not "": the bytes handed out exactly
    bool error = true;
    bool refused = true;  // a worker refuses a job (else the damage is never taken into a job)
    bool prefix = true;   // the bytes are a prefix of the data (not so for deflate data turned to garbage)
  };
  std::vector<Damage> damages;
  {
    std::string f = file;
    f[end - 8] ^= 0x40;  // CRC32
    damages.push_back({"crc", f, "corrupt gzip data", through});
  }
  {
    std::string f = file;
    f[end - 2] ^= 0x01;  // ISIZE
    damages.push_back({"isize", f, "corrupt gzip data", through});
  }
  {
    std::string f = file;
    for (size_t i = start + 18 + 200; i < start + 18 + 260; ++i)
      f[i] = static_cast<char>(0xff);  // deflate data
    damages.push_back({"deflate", f, "corrupt gzip data", "", true, true, false});
  }
  // A last block cut short and trailing garbage are never taken into a job: they stream.
  damages.push_back({"truncated", file.substr(0, start + sizes[k] / 2),
                     "unexpected end of gzip data (truncated file)", "", true, false});
  damages.push_back({"garbage_after", file + "garbage after gzip\n", "corrupt gzip data", text, true, false});
  {
    // A member whose BC size is one short: still gzip, the bytes are the data's. Its ISIZE is read from the
    // wrong place and looks too big to hold, so it streams without a job.
    std::string f = file;
    const uint32_t bsize = static_cast<uint32_t>(sizes[k] - 2);
    f[start + 16] = static_cast<char>(bsize & 0xff);
    f[start + 17] = static_cast<char>(bsize >> 8);
    damages.push_back({"short_size", f, "", text, false, false});
  }
  {
    // A BC size spanning the member and a plain member after it: the worker finds the member ending early
    // and refuses the job; streaming reads both members.
    std::string f = file;
    const std::string extra = member("extra line\n", false);
    const uint32_t bsize = static_cast<uint32_t>(sizes[k] + extra.size() - 1);
    f[start + 16] = static_cast<char>(bsize & 0xff);
    f[start + 17] = static_cast<char>(bsize >> 8);
    f.insert(end, extra);
    const std::string content = through + "extra line\n" + text.substr(through.size());
    damages.push_back({"spanning_size", f, "", content, false, true, false});
  }
  {
    std::string f = file;  // a plain member in the middle of the BGZF blocks, damaged
    const std::string plain = member(text.substr(0, 1000), false);
    std::string bad = plain;
    bad[bad.size() - 5] ^= 1;
    f.insert(start, plain + bad);
    // The bad member's CRC is wrong: its whole content comes out, then the error.
    damages.push_back({"plain_member", f, "corrupt gzip data",
                       before + text.substr(0, 1000) + text.substr(0, 1000), true, false, false});
  }
  for (const Damage& d : damages) {
    const std::string path = write(d.name + ".gz", d.file);
    for (GzipBackend backend : backends()) {
      SCOPED_TRACE(d.name + " backend " + std::to_string(static_cast<int>(backend)));
      const Outcome serial = read_file(path, backend, -1, 65536);
      GzipReaderStats st;
      const Outcome parallel = read_file(path, backend, 2, 65536, &st);
      EXPECT_EQ(parallel.error, serial.error);
      EXPECT_TRUE(parallel.bytes == serial.bytes) << parallel.bytes.size() << " vs " << serial.bytes.size();
      if (d.error) {
        EXPECT_NE(parallel.error.find(d.must_contain), std::string::npos) << parallel.error;
        EXPECT_EQ(parallel.error.rfind(path + ": ", 0), 0u) << parallel.error;  // names the file
      } else {
        EXPECT_EQ(parallel.error, "");
      }
      EXPECT_GE(parallel.bytes.size(), before.size());
      EXPECT_TRUE(parallel.bytes.compare(0, before.size(), before) == 0);
      if (d.prefix) {
        EXPECT_TRUE(text.compare(0, std::min(parallel.bytes.size(), text.size()), parallel.bytes) == 0);
      }
      if (!d.exact.empty()) {
        EXPECT_TRUE(parallel.bytes == d.exact) << parallel.bytes.size();
      }
      EXPECT_GT(st.parallel_members, 0u);
      if (d.refused) {  // the damaged job was refused by its worker and redone streaming
        EXPECT_GT(st.failed_jobs, 0u);
      } else {
        EXPECT_EQ(st.failed_jobs, 0u);
      }
    }
    // Lenient reading (BlockReader's damage note): the same lines and note either way.
    if (d.error) {
      auto lenient = [&](int workers) {
        GzipReaderOptions o;
        o.workers = workers;
        BlockReader r(open_input(path, o), 65536, kDefaultMaxLineBytes, true);
        ByteBuffer b;
        while (r.next(b)) {
        }
        return r.damage() + " after " + std::to_string(r.lines_read());
      };
      EXPECT_EQ(lenient(2), lenient(-1));
    }
  }
}

// A pipe: each member that arrives is handed out at once (the writer keeps the pipe open), BGZF or not; and
// a reader destroyed while its inflate thread waits on the pipe stops without a hang.
// A header with a file name (as `gzip FILE` writes it) that the first read cuts short: a regular file (the reader
// peeks at its first 16 bytes) and a pipe that delivers the header in two pieces, with every backend.
TEST_F(GzipReaderTest, HeaderCutShortByTheFirstRead) {
  const std::string text = lines(300);
  std::string named = member(text, false);
  named[3] = static_cast<char>(named[3] | 8);  // FNAME: a zero-ended name after the 10-byte header
  named.insert(10, std::string("a_rather_long_file_name.vw") + '\0');
  const std::string path = write("named.vw.gz", named);
  for (GzipBackend backend : backends()) {
    SCOPED_TRACE(static_cast<int>(backend));
    for (int workers : {-1, 2}) EXPECT_EQ(read_file(path, backend, workers, 4096), (Outcome{text, ""}));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
      EXPECT_EQ(::write(fds[1], named.data(), 14), 14);
      std::this_thread::sleep_for(50ms);
      EXPECT_EQ(::write(fds[1], named.data() + 14, named.size() - 14),
                static_cast<ssize_t>(named.size() - 14));
      ::close(fds[1]);
    });
    GzipReader reader(std::make_unique<FdReader>(fds[0], false, "pipe"), "pipe",
                      GzipReaderOptions{backend, 2, nullptr});
    EXPECT_EQ(read_all(reader, 4096), (Outcome{text, ""}));
    writer.join();
    ::close(fds[0]);
  }
}

TEST_F(GzipReaderTest, PipeGetsEachMemberThroughAtOnceAndStops) {
  for (int workers : {-1, 2}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    auto reader = std::make_unique<GzipReader>(std::make_unique<FdReader>(fds[0], false, "pipe"), "pipe",
                                               GzipReaderOptions{GzipBackend::kZlib, workers, nullptr});
    auto read_with_timeout = [&](size_t want) {
      auto f = std::async(std::launch::async, [&] {
        std::string got;
        char buf[4096];
        while (got.size() < want) {
          const size_t n = reader->read(buf, sizeof buf);
          if (n == 0) break;
          got.append(buf, n);
        }
        return got;
      });
      if (f.wait_for(30s) != std::future_status::ready) {
        ADD_FAILURE() << "read waits for more than the member that arrived";
        ::close(fds[1]);  // unblock it
        fds[1] = -1;
      }
      return f.get();
    };
    const std::string one = member("a b\n", false), two = member("c d\n", true);
    ASSERT_EQ(::write(fds[1], one.data(), one.size()), static_cast<ssize_t>(one.size()));
    EXPECT_EQ(read_with_timeout(4), "a b\n");
    if (fds[1] >= 0) {
      ASSERT_EQ(::write(fds[1], two.data(), two.size()), static_cast<ssize_t>(two.size()));
      EXPECT_EQ(read_with_timeout(4), "c d\n");
    }
    // A member still being written (a gzip writer that flushes each line): what it holds so far comes out.
    z_stream zs{};
    ASSERT_EQ(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    for (const char* line : {"e f\n", "g h\n"}) {
      if (fds[1] < 0) break;
      char out[256];
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(line));
      zs.avail_in = 4;
      zs.next_out = reinterpret_cast<Bytef*>(out);
      zs.avail_out = sizeof out;
      ASSERT_EQ(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
      const size_t n = sizeof out - zs.avail_out;
      ASSERT_EQ(::write(fds[1], out, n), static_cast<ssize_t>(n));
      EXPECT_EQ(read_with_timeout(4), line);
    }
    deflateEnd(&zs);
    // The inflate thread now waits on the open, empty pipe: the destructor must still return.
    auto done = std::async(std::launch::async, [&] { reader.reset(); });
    EXPECT_EQ(done.wait_for(30s), std::future_status::ready) << "the destructor hangs";
    if (fds[1] >= 0) ::close(fds[1]);
    done.get();
    ::close(fds[0]);
  }
}

// Stopping early: the reader is dropped after a little of a big input, plain and BGZF, with the queue full
// and jobs in flight (ASan checks that nothing leaks; the test that nothing hangs).
TEST_F(GzipReaderTest, StopsEarlyWithJobsInFlight) {
  const std::string text = lines(80000);
  const std::string plain = write("plain.gz", member(text, false));
  const std::string blocks = write("blocks.bgz", bgzf(text, 20000));
  for (const std::string& path : {plain, blocks}) {
    for (GzipBackend backend : backends()) {
      for (size_t take : {size_t{0}, size_t{1}, size_t{300000}}) {
        GzipReaderOptions o;
        o.backend = backend;
        o.workers = 2;
        auto s = open_input(path, o);
        std::string got(take, '\0');
        size_t have = 0;
        while (have < take) {
          const size_t n = s->read(got.data() + have, take - have);
          ASSERT_GT(n, 0u);
          have += n;
        }
        EXPECT_TRUE(text.compare(0, take, got) == 0);
        std::this_thread::sleep_for(5ms);  // let the queue fill
      }
    }
  }
}

}  // namespace
}  // namespace lepus
