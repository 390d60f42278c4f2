// The gzip inflaters (ISA-L's igzip or zlib) behind one small interface, and the BGZF header scan.
//
// A gzip file is any number of members back to back (RFC 1952). BGZF (bgzip, htslib) is such a file whose
// every member carries, in its header's extra field, a subfield 'B' 'C' with the member's total size - 1:
// the members' boundaries can be read without inflating, so the members can be inflated side by side.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace lepus {

enum class GzipBackend { kZlib, kIsal };

// One gzip inflater, streaming over members. Between members it starts the next one by itself.
class MemberInflater {
 public:
  // kIsal needs lepus built with ISA-L (have_isal_backend()).
  static std::unique_ptr<MemberInflater> make(GzipBackend backend);
  static bool have_isal_backend();
  virtual ~MemberInflater() = default;

  // The compressed bytes to inflate next (they must stay valid while avail_in() > 0).
  virtual void set_input(const uint8_t* p, size_t n) = 0;
  virtual size_t avail_in() const = 0;

  struct Step {
    size_t produced = 0;      // bytes written to out
    bool member_end = false;  // a member ended, CRC32 and ISIZE checked; the next call starts the next one
    std::string error;        // damage: ": corrupt gzip data (...)", to follow the source's name
  };
  // One call of the inflater into out[0, n), n > 0: inflates what the input allows.
  virtual Step inflate(uint8_t* out, size_t n) = 0;
  // Forgets any member in progress: the next input starts a member.
  virtual void restart() = 0;

  // Inflates in[0, n) as exactly one whole gzip member whose content is exactly out[0, size): true when
  // the member ends at byte n, inflates to `size` bytes, and its CRC32 and ISIZE match. Anything else
  // (damage, a member that ends early or runs on, another size) is false; out's content is then undefined.
  virtual bool inflate_whole(const uint8_t* in, size_t n, uint8_t* out, size_t size);
};

// What a gzip member header at p[0, n) says about BGZF.
enum class BgzfHeader {
  kNeedMore,  // too few bytes to tell: give more (or, at the end of the input, it is no BGZF block)
  kBgzf,      // a BGZF block: *block_size is the member's size in bytes (BSIZE + 1)
  kOther,     // not a BGZF block header (another gzip member, damage, or trailing garbage)
};
BgzfHeader scan_bgzf_header(const uint8_t* p, size_t n, size_t* block_size);

// The little-endian 32-bit word at p (gzip's CRC32 and ISIZE fields).
inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace lepus
