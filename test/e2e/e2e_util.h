// Helpers for end-to-end tests: run the lepus binary through the shell and compare its outputs with VW's.
#pragma once
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace lepus::e2e {

inline bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// A fresh scratch directory per test, removed with everything in it when the test program exits (also after a
// failed test).
inline std::string scratch_dir(const std::string& name) {
  struct Cleaner {
    std::vector<std::string> dirs;
    ~Cleaner() {
      std::error_code ec;
      for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
    }
  };
  static Cleaner cleaner;
  std::string d = std::filesystem::temp_directory_path().string() + "/lepus_e2e_" +
                  std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  cleaner.dirs.push_back(d);
  return d;
}

// Runs `lepus ARGS` with the shell; returns the exit status.
inline int run_lepus(const std::string& args) {
  const std::string cmd = std::string(LEPUS_BINARY) + " " + args;
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

// Runs `lepus ARGS` inside `dir` (relative paths as a user types them) with the shell: "cd DIR || exit;
// lepus ARGS", so an ARGS with '&' or ';' runs entirely inside DIR. Returns the exit status (128 + the signal
// for a run a signal ended).
inline int run_in(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir + "' || exit 99; " + std::string(LEPUS_BINARY) + " " + args;
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  return out;
}

// The first number on each line of a -p / -r file (a tag may follow).
inline std::vector<double> read_predictions(const std::string& path) {
  std::vector<double> out;
  for (const auto& l : lines_of(read_file(path))) out.push_back(std::strtod(l.c_str(), nullptr));
  return out;
}

// "average loss = X" from a stderr text; NaN when absent.
inline double summary_value(const std::string& stderr_text, const std::string& key) {
  for (const auto& l : lines_of(stderr_text)) {
    if (l.rfind(key + " = ", 0) == 0) return std::strtod(l.c_str() + key.size() + 3, nullptr);
  }
  return std::nan("");
}

struct PredictionMatch {
  size_t n = 0;
  size_t within = 0;
  double max_abs = 0.0;
  double share() const { return n ? static_cast<double>(within) / n : 0.0; }
};

inline PredictionMatch compare_predictions(const std::vector<double>& a, const std::vector<double>& b,
                                           double tol) {
  PredictionMatch m;
  m.n = std::max(a.size(), b.size());
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    m.max_abs = std::max(m.max_abs, d);
    if (d <= tol) ++m.within;
  }
  return m;
}

// The progress table and summary: the lines from the table header on.
inline std::vector<std::string> table_and_summary(const std::string& stderr_text) {
  const auto lines = lines_of(stderr_text);
  std::vector<std::string> out;
  bool on = false;
  for (const auto& l : lines) {
    if (l.rfind("average  since", 0) == 0) on = true;
    if (on && l.rfind("[warning]", 0) != 0) out.push_back(l);
  }
  return out;
}

inline bool is_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// Same layout: the same lines, the same tokens at the same columns; numbers within a relative tolerance
// (absolute for small ones). Returns an empty string when equal, else the first difference.
inline std::string compare_layout(const std::vector<std::string>& ours, const std::vector<std::string>& vw,
                                  double rel_tol, double abs_tol) {
  if (ours.size() != vw.size())
    return "line count " + std::to_string(ours.size()) + " vs VW " + std::to_string(vw.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    std::stringstream a(ours[i]), b(vw[i]);
    std::vector<std::string> ta, tb;
    std::string t;
    while (a >> t) ta.push_back(t);
    while (b >> t) tb.push_back(t);
    if (ta.size() != tb.size()) return "tokens differ: '" + ours[i] + "' vs VW '" + vw[i] + "'";
    for (size_t k = 0; k < ta.size(); ++k) {
      if (is_number(ta[k]) && is_number(tb[k])) {
        const double x = std::strtod(ta[k].c_str(), nullptr), y = std::strtod(tb[k].c_str(), nullptr);
        if (std::fabs(x - y) > std::max(abs_tol, rel_tol * std::fabs(y)))
          return "value differs: '" + ours[i] + "' vs VW '" + vw[i] + "'";
      } else if (ta[k] != tb[k]) {
        return "token differs: '" + ours[i] + "' vs VW '" + vw[i] + "'";
      }
    }
    // Column layout: every token ends at the same column as VW's (right-aligned fields).
    if (ours[i].size() != vw[i].size() && ta.size() > 1)
      return "width differs: '" + ours[i] + "' vs VW '" + vw[i] + "'";
  }
  return "";
}

// Training on the first `head` lines of the gzip file `data`, saving, and continuing on the rest from the model
// predicts exactly as one uninterrupted run, for each of `option_sets` (lepus options after the data file).
inline void expect_resumed_equals_one_run(const std::string& dir, const std::string& data, int head,
                                          const std::vector<std::string>& option_sets) {
  const std::string n = std::to_string(head);
  const std::string split = "cd '" + dir + "' && zcat " + data + " | head -n " + n + " > first.vw && zcat " +
                            data + " | tail -n +" + std::to_string(head + 1) + " > rest.vw";
  ASSERT_EQ(std::system(split.c_str()), 0);
  for (const std::string& o : option_sets) {
    SCOPED_TRACE(o);
    ASSERT_EQ(run_lepus(data + " " + o + " -p " + dir + "/whole.p 2>/dev/null"), 0);
    ASSERT_EQ(run_lepus(dir + "/first.vw " + o + " -f " + dir + "/half.m -p " + dir + "/p1 2>/dev/null"), 0);
    ASSERT_EQ(run_lepus(dir + "/rest.vw -i " + dir + "/half.m -p " + dir + "/p2 2>/dev/null"), 0);
    EXPECT_EQ(read_file(dir + "/p1") + read_file(dir + "/p2"), read_file(dir + "/whole.p"));
  }
}

}  // namespace lepus::e2e
