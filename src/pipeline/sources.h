// The pass's input: the blocks a pass reads (whole lines of the data files, one after another, or cache records) and
// the batch each becomes in the pipeline (pipeline/pass_runner.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/csv.h"
#include "io/block_reader.h"
#include "io/byte_buffer.h"
#include "io/example_cache.h"
#include "io/input_source.h"
#include "lepus/example.h"

namespace lepus {

// A unit of work flowing through the pipeline: a block of text (or cache records) and its parsed examples.
// Batches are pooled and reused, so their vectors keep their capacity and the steady state allocates nothing.
class Batch {
 public:
  ByteBuffer bytes;
  std::vector<Example> examples;  // [0, size) valid
  size_t size = 0;
  uint64_t line_count = 0;    // text: lines in bytes (examples carry line numbers relative to the block)
  uint64_t lines_before = 0;  // --distributed: lines of the blocks just before this one that other ranks take
  std::vector<std::pair<uint64_t, std::string>> warnings;  // (line relative to the block, message), in order
  bool skip_first_line = false;  // the first block of a table with a header: line 1 is the header
  size_t file = 0;               // text: the data file the block came from
};

class BlockSource {
 public:
  virtual ~BlockSource() = default;
  virtual bool next(ByteBuffer& out) = 0;
};

// The data files (or stdin), read one after another as one stream. A block never spans two files, so each batch
// knows its file: warnings name that file and its own line numbers, while holdout counts lines over the stream.
class TextSource final : public BlockSource {
 public:
  // No paths means stdin; none = true means no input at all (--no_stdin without a data file). csv_delimiter
  // >= 0: RFC 4180 CSV, whose records may span lines inside quoted cells.
  TextSource(std::vector<std::string> paths, size_t block, size_t max_line, bool lenient, bool none,
             int csv_delimiter)
      : paths_(std::move(paths)), block_(block), max_line_(max_line), lenient_(lenient), csv_(csv_delimiter) {
    if (paths_.empty() && !none) paths_.push_back("");  // stdin
    if (!paths_.empty()) open_next();
  }
  // What damaged each input that lenient reading stopped early, with the line it ended after.
  const std::vector<std::string>& damages() const { return damages_; }
  bool next(ByteBuffer& out) override {
    if (has_pending_) {
      out.swap(pending_);
      has_pending_ = false;
      starts_file_ = true;
      return true;
    }
    while (reader_) {
      if (reader_->next(out)) {
        starts_file_ = fresh_;
        fresh_ = false;
        return true;
      }
      if (!reader_->damage().empty())
        damages_.push_back(reader_->damage() + "; the input ends after line " +
                           std::to_string(reader_->lines_read()) + ", the rest is lost");
      ++file_;
      reader_.reset();
      if (file_ < paths_.size()) open_next();
    }
    return false;
  }
  size_t file() const { return file_; }  // the file the last block came from
  bool inflates_alone() const { return reader_ && reader_->inflates_alone(); }  // the file being read
  bool starts_file() const { return starts_file_; }  // the last block is its file's first
  // The first file's first line (without its line end), read ahead without consuming it: a table's header.
  std::string first_line() {
    if (!has_pending_ && reader_ && file_ == 0 && fresh_) {
      has_pending_ = reader_->next(pending_);
      fresh_ = false;
    }
    if (!has_pending_) return "";
    return line_of(pending_);
  }
  // A block's first line (its first record, in CSV), without its line end.
  std::string line_of(const ByteBuffer& b) const {
    size_t end = b.size();
    if (csv_ >= 0) {
      CsvScan scan;
      csv_scan(b.data(), b.size(), static_cast<char>(csv_), scan, true);
      if (scan.record_end > 0) end = scan.record_end - 1;
    } else if (const void* nl = std::memchr(b.data(), '\n', b.size())) {
      end = static_cast<size_t>(static_cast<const char*>(nl) - b.data());
    }
    return std::string(b.data(), end);
  }

 private:
  void open_next() {
    reader_ =
        std::make_unique<BlockReader>(InputSource::open(paths_[file_]), block_, max_line_, lenient_, csv_);
    fresh_ = true;
  }
  std::vector<std::string> paths_;
  size_t block_, max_line_;
  bool lenient_;
  int csv_;
  size_t file_ = 0;
  std::unique_ptr<BlockReader> reader_;
  bool fresh_ = true, starts_file_ = false;
  ByteBuffer pending_;
  bool has_pending_ = false;
  std::vector<std::string> damages_;
};

class CacheSource final : public BlockSource {
 public:
  CacheSource(std::unique_ptr<CacheReader> r, size_t block) : reader_(std::move(r)), block_(block) {}
  bool next(ByteBuffer& out) override { return reader_->next_block(out, block_); }
  void rewind() { reader_->rewind(); }

 private:
  std::unique_ptr<CacheReader> reader_;
  size_t block_;
};

}  // namespace lepus
