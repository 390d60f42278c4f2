// The text files a run writes beside the model: -p and -r (one line per example) and --progress_log. Every write,
// flush and close is checked: a full disk is an IoError naming the file, never a silently short file.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "lepus/errors.h"
#include "pipeline/progress.h"

namespace lepus {

// A text file a run writes (-p, -r, --progress_log); "/dev/stdout" or "-" is standard output (our stdout stream: a
// redirected file is not truncated).
class OutputFile {
 public:
  explicit OutputFile(const std::string& path) : path_(path) {
    if (path.empty()) return;
    if (path == "/dev/stdout" || path == "-") {
      f_ = stdout;
    } else {
      f_ = std::fopen(path.c_str(), "w");
      if (!f_) throw IoError(path + ": cannot open for writing: " + std::strerror(errno));
      owned_ = true;
    }
  }
  ~OutputFile() {
    if (owned_ && f_) std::fclose(f_);
  }
  bool active() const { return f_ != nullptr; }
  void write(const std::string& s) {
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size())
      throw IoError(path_ + ": write failed: " + std::strerror(errno));
  }
  void flush() {
    if (f_ && std::fflush(f_) != 0) throw IoError(path_ + ": write failed: " + std::strerror(errno));
  }
  void close() {
    if (!f_) return;
    const int failed = owned_ ? std::fclose(f_) : std::fflush(f_);
    f_ = nullptr;
    if (failed != 0) throw IoError(path_ + ": write failed");
  }

 private:
  std::FILE* f_ = nullptr;
  bool owned_ = false;
  std::string path_;
};

// -p and -r: one line per example, the value and the tag.
class PredictionFile {
 public:
  explicit PredictionFile(const std::string& path) : out_(path) {}
  bool active() const { return out_.active(); }
  void write(float v,
             const std::string& tag) {  // formatting is skipped when there is no file (most training runs)
    if (out_.active()) write_text(format_prediction(v), tag);
  }
  void write_text(std::string s, const std::string& tag) {
    if (!out_.active()) return;
    if (!tag.empty()) {
      s += ' ';
      s += tag;
    }
    s += '\n';
    out_.write(s);
  }
  void flush() { out_.flush(); }

 private:
  OutputFile out_;
};

// --progress_log: the table's figures at the LogGrid's example counts and at the end of the run. Each row is
// flushed as it is written, so the file can be followed (or plotted) while a long run goes on.
class ProgressLog {
 public:
  explicit ProgressLog(const std::string& path) : out_(path) { write(progress_log_header()); }
  // After every example the table counts: `row` holds its entries, `now` the losses the table reports.
  void example(ProgressRow row, const LossSum& now) {
    latest_ = std::move(row);
    latest_now_ = now;
    if (grid_.due(latest_.example_counter)) write_latest();
  }
  // The run's last row (unless the last one written already holds the final figures), then the file is closed.
  void finish(const LossSum& now) {
    latest_now_ = now;
    if (latest_.example_counter > 0 && !(written_ == latest_.example_counter && written_now_ == now))
      write_latest();
    out_.close();
  }

 private:
  void write_latest() {
    // In holdout passes the log, like the table, reports the held-out examples; their since-last has its own mark.
    set_losses(latest_, latest_now_, latest_.holdout ? last_holdout_ : last_);
    write(progress_log_row(latest_));
    (latest_.holdout ? last_holdout_ : last_) = latest_now_;
    written_ = latest_.example_counter;
    written_now_ = latest_now_;
  }
  void write(const std::string& s) {
    out_.write(s);
    out_.flush();
  }
  OutputFile out_;
  LogGrid grid_;
  ProgressRow latest_;  // the last example's entries
  LossSum latest_now_;
  LossSum last_, last_holdout_;  // the losses at the last row written (progressive, holdout)
  uint64_t written_ = 0;         // the example count of the last row written
  LossSum written_now_;
};

}  // namespace lepus
