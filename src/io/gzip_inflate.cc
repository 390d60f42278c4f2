// zlib and ISA-L behind MemberInflater; the BGZF header scan.
#include "io/gzip_inflate.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "lepus/errors.h"

#ifdef LEPUS_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace lepus {
namespace {

// Both libraries count in 32 bits; every buffer lepus hands them is far smaller, this only guards.
constexpr size_t kMaxCall = size_t{1} << 30;

class ZlibInflater final : public MemberInflater {
 public:
  ZlibInflater() {
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw IoError("cannot initialise zlib");
  }
  ~ZlibInflater() override { inflateEnd(&zs_); }
  void set_input(const uint8_t* p, size_t n) override {
    zs_.next_in = const_cast<Bytef*>(p);
    zs_.avail_in = static_cast<uInt>(std::min(n, kMaxCall));
  }
  size_t avail_in() const override { return zs_.avail_in; }
  Step inflate(uint8_t* out, size_t n) override {
    Step s;
    zs_.next_out = out;
    zs_.avail_out = static_cast<uInt>(std::min(n, kMaxCall));
    const uInt room = zs_.avail_out;
    const int rc = ::inflate(&zs_, Z_NO_FLUSH);
    s.produced = room - zs_.avail_out;
    if (rc == Z_STREAM_END) {
      s.member_end = true;
      inflateReset(&zs_);  // a following member (concatenated gzip) starts a new stream
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {  // Z_BUF_ERROR: no progress possible, needs more input
      s.error = std::string(": corrupt gzip data (") + (zs_.msg ? zs_.msg : "zlib error") + ")";
    }
    return s;
  }
  void restart() override { inflateReset(&zs_); }

 private:
  z_stream zs_;
};

#ifdef LEPUS_HAVE_ISAL
// The same contract with ISA-L's igzip (same bytes out as zlib, several times faster).
class IsalInflater final : public MemberInflater {
 public:
  IsalInflater() {
    isal_inflate_init(&st_);
    st_.crc_flag = ISAL_GZIP;  // parse the gzip wrapper, check CRC32 and ISIZE
  }
  void set_input(const uint8_t* p, size_t n) override {
    st_.next_in = const_cast<uint8_t*>(p);
    st_.avail_in = static_cast<uint32_t>(std::min(n, kMaxCall));
  }
  size_t avail_in() const override { return st_.avail_in; }
  Step inflate(uint8_t* out, size_t n) override {
    Step s;
    if (st_.block_state == ISAL_BLOCK_FINISH) restart();  // a following member (concatenated gzip)
    st_.next_out = out;
    st_.avail_out = static_cast<uint32_t>(std::min(n, kMaxCall));
    const uint32_t room = st_.avail_out;
    const int rc = isal_inflate(&st_);
    s.produced = room - st_.avail_out;
    if (rc < 0) {
      s.error = std::string(": corrupt gzip data (") +
                (rc == ISAL_INCORRECT_CHECKSUM ? std::string("checksum mismatch")
                                               : "igzip error " + std::to_string(rc)) +
                ")";
    } else if (st_.block_state == ISAL_BLOCK_FINISH) {
      s.member_end = true;  // igzip hands back the input bytes past the member's trailer
    }
    return s;
  }
  void restart() override {
    isal_inflate_reset(&st_);  // keeps next_in / avail_in
    st_.crc_flag = ISAL_GZIP;
  }
  // One call of igzip's one-shot inflater, straight into out: the streaming one decodes a member's start into
  // its own buffer and copies it out (BGZF rcv1x200: the copy was 2.2% of all CPU).
  bool inflate_whole(const uint8_t* in, size_t n, uint8_t* out, size_t size) override {
    if (n > kMaxCall || size > kMaxCall) return false;
    st_.next_in = const_cast<uint8_t*>(in);
    st_.avail_in = static_cast<uint32_t>(n);
    st_.next_out = out;
    st_.avail_out = static_cast<uint32_t>(size);
    st_.crc_flag = ISAL_GZIP;  // the header read, then CRC32 and ISIZE checked against the trailer
    const int rc = isal_inflate_stateless(&st_);
    // The member must fill out exactly and end exactly at n (igzip hands back any bytes past the trailer).
    const bool ok = rc == ISAL_DECOMP_OK && st_.avail_out == 0 && st_.avail_in == 0 && n >= 8 &&
                    load_le32(in + n - 4) == static_cast<uint32_t>(size);
    restart();
    return ok;
  }

 private:
  inflate_state st_;
};
#endif

}  // namespace

bool MemberInflater::have_isal_backend() {
#ifdef LEPUS_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<MemberInflater> MemberInflater::make(GzipBackend backend) {
#ifdef LEPUS_HAVE_ISAL
  if (backend == GzipBackend::kIsal) return std::make_unique<IsalInflater>();
#endif
  if (backend == GzipBackend::kIsal) throw IoError("this lepus was built without ISA-L");
  return std::make_unique<ZlibInflater>();
}

bool MemberInflater::inflate_whole(const uint8_t* in, size_t n, uint8_t* out, size_t size) {
  restart();
  set_input(in, n);
  if (avail_in() != n) return false;  // beyond one call's reach (never for a BGZF block)
  size_t done = 0;
  uint8_t overflow;  // when out is full: a member that runs on writes here, and is refused
  for (;;) {
    const size_t before_in = avail_in();
    const Step s = done < size ? inflate(out + done, size - done) : inflate(&overflow, 1);
    done += s.produced;
    if (!s.error.empty() || done > size) return false;
    if (s.member_end) return done == size && avail_in() == 0;
    if (s.produced == 0 && avail_in() == before_in) return false;  // stuck: the member needs bytes past n
  }
}

BgzfHeader scan_bgzf_header(const uint8_t* p, size_t n, size_t* block_size) {
  // ID1 ID2 CM FLG: gzip, deflate, FEXTRA set and no reserved flag (left to the inflater to judge).
  if (n >= 1 && p[0] != 0x1f) return BgzfHeader::kOther;
  if (n >= 2 && p[1] != 0x8b) return BgzfHeader::kOther;
  if (n >= 3 && p[2] != 8) return BgzfHeader::kOther;
  if (n >= 4 && ((p[3] & 0x04) == 0 || (p[3] & 0xe0) != 0)) return BgzfHeader::kOther;
  if (n < 12) return BgzfHeader::kNeedMore;
  const size_t xlen = size_t{p[10]} | size_t{p[11]} << 8;
  if (n < 12 + xlen) return BgzfHeader::kNeedMore;
  // The extra field's subfields: SI1 SI2 LEN(2) data[LEN]; BGZF's is 'B' 'C' 2 BSIZE(2).
  for (size_t i = 12; i + 4 <= 12 + xlen;) {
    const size_t len = size_t{p[i + 2]} | size_t{p[i + 3]} << 8;
    if (i + 4 + len > 12 + xlen) return BgzfHeader::kOther;
    if (p[i] == 'B' && p[i + 1] == 'C' && len == 2) {
      const size_t size = (size_t{p[i + 4]} | size_t{p[i + 5]} << 8) + 1;
      // At least the header, an empty deflate block (2 bytes) and the 8-byte trailer.
      if (size < 12 + xlen + 2 + 8) return BgzfHeader::kOther;
      *block_size = size;
      return BgzfHeader::kBgzf;
    }
    i += 4 + len;
  }
  return BgzfHeader::kOther;
}

}  // namespace lepus
