// The inflate floor of utl/bench's gzip rows: a gzip file (one member or many, as BGZF) inflated by ISA-L on one
// thread into a reused 256 KiB buffer, the output thrown away, as lepus's reader inflates a single-member file
// (src/io/gzip_reader.cc). No reader that inflates the stream on one core can be faster, so for a single gzip
// member the bench's VW seconds over this floor's are the most lepus's ratio can be on that row.
// Built by utl/bench: g++ -O2 -std=c++20 -o bench_data/inflate_floor utl/inflate_floor.cc -lisal
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: inflate_floor FILE.gz\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<uint8_t> in(size_t{1} << 18), out(size_t{1} << 18);
  inflate_state s;
  isal_inflate_init(&s);
  s.crc_flag = ISAL_GZIP;
  uint64_t total = 0;
  bool eof = false;
  for (;;) {
    if (s.avail_in == 0 && !eof) {
      const ssize_t got = read(fd, in.data(), in.size());
      if (got < 0) {
        std::perror("read");
        return 1;
      }
      eof = got == 0;
      s.next_in = in.data();
      s.avail_in = static_cast<uint32_t>(got);
    }
    s.next_out = out.data();
    s.avail_out = static_cast<uint32_t>(out.size());
    if (isal_inflate(&s) != ISAL_DECOMP_OK) {
      std::fprintf(stderr, "inflate_floor: %s: damaged gzip data\n", argv[1]);
      return 1;
    }
    total += out.size() - s.avail_out;
    if (s.block_state == ISAL_BLOCK_FINISH) {  // a member ended: the next one, if any
      if (s.avail_in == 0) {
        const ssize_t got = read(fd, in.data(), in.size());
        if (got <= 0) break;
        s.next_in = in.data();
        s.avail_in = static_cast<uint32_t>(got);
      }
      uint8_t* next = s.next_in;
      uint32_t left = s.avail_in;
      isal_inflate_reset(&s);
      s.crc_flag = ISAL_GZIP;
      s.next_in = next;
      s.avail_in = left;
    } else if (eof && s.avail_in == 0 && s.avail_out != 0) {
      std::fprintf(stderr, "inflate_floor: %s: truncated gzip data\n", argv[1]);
      return 1;
    }
  }
  close(fd);
  std::printf("%llu\n", static_cast<unsigned long long>(total));
  return 0;
}
