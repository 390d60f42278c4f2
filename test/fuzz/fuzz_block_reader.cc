// Fuzz target: the input layer (io/input_source.h, io/block_reader.h). The input is a data file, plain or
// gzip (recognised by its magic bytes); it is read through InputSource::open and a BlockReader with small
// blocks, once with zlib and, when lepus has ISA-L, once with igzip. Truncated or corrupt gzip is a
// legitimate IoError. Checks: every block but the last ends at '\n', no block is empty, the blocks
// concatenate to the same bytes whatever the block size, and both inflaters give the same bytes or both
// throw.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_common.h"
#include "io/block_reader.h"
#include "io/input_source.h"
#include "lepus/errors.h"

namespace {

using lepus::InputSource;

struct Result {
  bool ok = false;  // false: the source threw IoError after delivering `bytes`
  std::string bytes;
  std::string error;
};

// Known differences between the inflaters, reported and awaiting a decision (crashes/README.md): zlib refuses
// a gzip header with reserved FLG bits set (RFC 1952 says a decoder must), ISA-L's igzip reads on.
bool known_divergence(const Result& zlib, const Result& isal) {
  return !zlib.ok && isal.ok && zlib.error.find("unknown header flags set") != std::string::npos;
}

// The whole content read in blocks of `block` bytes.
Result read_all(const std::string& path, InputSource::Gzip gzip, size_t block) {
  Result r;
  try {
    lepus::BlockReader reader(InputSource::open(path, gzip), block);
    lepus::ByteBuffer buf;
    bool last_had_newline = true;
    while (reader.next(buf)) {
      FUZZ_CHECK(!buf.empty());
      FUZZ_CHECK(last_had_newline);  // a block holds whole lines: only the input's last may lack its '\n'
      last_had_newline = buf.back() == '\n';
      r.bytes.append(buf.data(), buf.size());
    }
    FUZZ_CHECK(!reader.next(buf));  // the end is sticky
    FUZZ_CHECK(buf.empty());
    r.ok = true;
  } catch (const lepus::IoError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static lepus::fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;

  const Result ref = read_all(path, InputSource::Gzip::kZlib, 4096);
  if (!gzip) {  // plain input: the bytes themselves, never an error
    FUZZ_CHECK(ref.ok);
    FUZZ_CHECK(ref.bytes.size() == size && std::memcmp(ref.bytes.data(), data, size) == 0);
  }
  // A small block size from the input's length (deterministic): many refills and carried partial lines.
  // Kept to inputs that inflate to little, so a gzip bomb of a few KiB is not read a byte at a time.
  static const size_t kBlocks[4] = {1, 7, 64, 1000};
  const size_t small = ref.bytes.size() <= 65536 ? kBlocks[size % 4] : 4096;
  const Result zlib = read_all(path, InputSource::Gzip::kZlib, small);
  FUZZ_CHECK(zlib.ok == ref.ok);
  if (ref.ok) FUZZ_CHECK(zlib.bytes == ref.bytes);
  if (InputSource::have_isal()) {
    const Result isal = read_all(path, InputSource::Gzip::kIsal, size % 2 ? small : 4096);
    if (!known_divergence(ref, isal)) {
      FUZZ_CHECK(isal.ok == ref.ok);
      if (ref.ok) FUZZ_CHECK(isal.bytes == ref.bytes);
    }
  }
  return 0;
}
