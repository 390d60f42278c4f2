// Compressed input other than gzip: zstd, bzip2 and xz read as they are (by their magic bytes), other formats an
// error naming them (see stream_decoders.cc).
#pragma once
#include <memory>
#include <string>

#include "io/fd_reader.h"
#include "io/input_source.h"

namespace lepus {

// The compressed format whose magic bytes `bytes` begin with ("gzip", "zstd", "bzip2", "xz", "zip", "7z", "lz4",
// "compress (.Z)", "lzip"), or nullptr.
const char* compressed_format(const std::string& bytes);

// A decoder for a zstd, bzip2 or xz file; nullptr for plain data and for gzip (the caller's reader); IoError
// naming the format for another compressed format. The decoded bytes are checked not to be compressed again.
std::unique_ptr<InputSource> open_decoder(std::unique_ptr<FdReader> fd, std::string name);

// `inner` (a decoder of format `outer`) with the same check on its first decoded bytes.
std::unique_ptr<InputSource> check_decoded(std::unique_ptr<InputSource> inner, const char* outer);

}  // namespace lepus
