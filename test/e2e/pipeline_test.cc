// The parallel pipeline, interactive pipes, the example cache, passes and holdout (issue 4).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <cstring>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;
const std::string kRcv1 = kData + "/vw/inputs/rcv1_small.vw.gz";

// rcv1_small four times over (~5.7 MB of text, several 1 MiB blocks), made in the scratch directory.
std::string rcv1_x4(const std::string& d) {
  const std::string f = d + "/rcv1x4.vw";
  EXPECT_EQ(std::system(("for i in 1 2 3 4; do gzip -dc " + kRcv1 + "; done > " + f).c_str()), 0);
  return f;
}

TEST(Pipeline, ResultsDoNotDependOnTheThreadCount) {
  const std::string d = scratch_dir("threads");
  const std::string f = rcv1_x4(d);
  for (const std::string extra : {"--loss_function logistic", "--loss_function logistic -q ff --l2 1e-7"}) {
    std::string first_p, first_m;
    for (int t : {1, 2, 4}) {
      const std::string tag = std::to_string(t);
      ASSERT_EQ(run_lepus("-d " + f + " " + extra + " --threads " + tag + " -p " + d + "/p" + tag + " -r " +
                          d + "/r" + tag + " --readable_model " + d + "/m" + tag + " --quiet"),
                0);
      const std::string p = read_file(d + "/p" + tag) + read_file(d + "/r" + tag);
      const std::string m = read_file(d + "/m" + tag);
      EXPECT_EQ(lines_of(read_file(d + "/p" + tag)).size(), 4000u);
      if (t == 1) {
        first_p = p;
        first_m = m;
      } else {
        EXPECT_EQ(p, first_p) << "threads " << t << " " << extra;
        EXPECT_EQ(m, first_m) << "threads " << t << " " << extra;
      }
    }
  }
}

// A process that writes one example to lepus's stdin and waits gets its prediction at once.
TEST(Pipeline, PipesStayInteractive) {
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::execl(LEPUS_BINARY, LEPUS_BINARY, "--loss_function", "logistic", "-p", "/dev/stdout", "--quiet",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  std::string pending;
  auto read_line = [&](int timeout_ms) -> std::string {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const size_t nl = pending.find('\n');
      if (nl != std::string::npos) {
        std::string l = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        return l;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "<timeout>";
      pollfd pfd{from_child[0], POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(from_child[0], buf, sizeof buf);
      if (n <= 0) return "<eof>";
      pending.append(buf, static_cast<size_t>(n));
    }
  };
  const char* lines[] = {"1 'first |f a b\n", "-1 'second |f c\n", "1 'third |f a\n"};
  for (const char* l : lines) {
    ASSERT_EQ(::write(to_child[1], l, std::strlen(l)), static_cast<ssize_t>(std::strlen(l)));
    const std::string got = read_line(5000);
    const std::string tag = std::string(l).substr(std::string(l).find('\'') + 1);
    EXPECT_NE(got.find(tag.substr(0, tag.find(' '))), std::string::npos) << "got '" << got << "'";
  }
  ::close(to_child[1]);
  EXPECT_EQ(read_line(5000), "<eof>");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(from_child[0]);
}

TEST(Pipeline, DamagedGzipIsAWarningOrUnderStrictAnError) {
  const std::string d = scratch_dir("reader_error");
  // A gzip file cut in the middle: what was read is used, the loss of the rest is a counted warning.
  ASSERT_EQ(std::system(("head -c 300000 " + kRcv1 + " > " + d + "/cut.gz").c_str()), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_lepus("-d " + d + "/cut.gz -p " + d + "/p.txt 2> " + d + "/err.txt"), 0);
  const std::string err = read_file(d + "/err.txt");
  EXPECT_NE(err.find("cut.gz: unexpected end of gzip data (truncated file); the input ends after line "),
            std::string::npos)
      << err;
  EXPECT_EQ(summary_value(err, "malformed input warnings"), 1.0);
  const double examples = summary_value(err, "number of examples");
  EXPECT_GT(examples, 300.0);
  EXPECT_LT(examples, 1000.0);
  // Under --strict_parse the reader's error stops the whole pipeline: exit 1, never a hang.
  EXPECT_EQ(run_lepus("-d " + d + "/cut.gz --strict_parse -p " + d + "/p2.txt 2> " + d + "/err2.txt"), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  const auto lines = lines_of(read_file(d + "/err2.txt"));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("cut.gz: unexpected end of gzip data"), std::string::npos) << lines.back();
}

TEST(Pipeline, MaxLineBytesNamesTheLine) {
  const std::string d = scratch_dir("max_line");
  std::ofstream(d + "/t.vw") << "1 |f a\n-1 |f " << std::string(5000, 'x') << "\n1 |f b\n";
  EXPECT_EQ(run_lepus("-d " + d + "/t.vw --max_line_bytes 1K 2> " + d + "/e"), 1);
  const auto lines = lines_of(read_file(d + "/e"));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("t.vw:2: line longer than 1024 bytes; raise the limit with --max_line_bytes"),
            std::string::npos)
      << lines.back();
  EXPECT_EQ(run_lepus("-d " + d + "/t.vw --max_line_bytes 1M --quiet"), 0);
}

TEST(Cache, CreatedThenUsedWithIdenticalResults) {
  const std::string d = scratch_dir("cache");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " > " + d + "/data.vw").c_str()), 0);
  const std::string run = "-d " + d + "/data.vw -c --loss_function logistic -q ff";
  ASSERT_EQ(run_lepus(run + " -p " + d + "/p1 2> " + d + "/e1"), 0);
  EXPECT_NE(read_file(d + "/e1").find("creating cache_file = " + d + "/data.vw.cache"), std::string::npos);
  ASSERT_TRUE(exists(d + "/data.vw.cache"));
  ASSERT_EQ(run_lepus(run + " -p " + d + "/p2 2> " + d + "/e2"), 0);
  EXPECT_NE(read_file(d + "/e2").find("using cache_file = " + d + "/data.vw.cache"), std::string::npos);
  EXPECT_EQ(read_file(d + "/p1"), read_file(d + "/p2"));
  // -k rebuilds it.
  ASSERT_EQ(run_lepus(run + " -k -p " + d + "/p3 2> " + d + "/e3"), 0);
  EXPECT_NE(read_file(d + "/e3").find("creating cache_file"), std::string::npos);
  EXPECT_EQ(read_file(d + "/p1"), read_file(d + "/p3"));
}

TEST(Cache, StaleTruncatedDamagedOrForeignCachesAreRebuilt) {
  const std::string d = scratch_dir("cache_bad");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | head -n 300 > " + d + "/data.vw").c_str()), 0);
  const std::string run = "-d " + d + "/data.vw --cache_file " + d + "/c --loss_function logistic";
  ASSERT_EQ(run_lepus(run + " -p " + d + "/ref --quiet"), 0);
  const std::string good = read_file(d + "/c");
  ASSERT_GT(good.size(), 1000u);
  auto put = [&](const std::string& bytes) { std::ofstream(d + "/c", std::ios::binary) << bytes; };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x04;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", good.substr(0, good.size() - 100)},
      {"flipped", flipped},
      {"foreign", std::string(5000, 'x')},
      {"empty", ""},
  };
  for (const auto& [name, bytes] : cases) {
    put(bytes);
    ASSERT_EQ(run_lepus(run + " -p " + d + "/p 2> " + d + "/e"), 0) << name;
    EXPECT_NE(read_file(d + "/e").find("creating cache_file"), std::string::npos) << name;
    EXPECT_EQ(read_file(d + "/p"), read_file(d + "/ref")) << name;
  }
  // Other parse options: rebuilt. Changed data (new contents, new mtime): rebuilt.
  ASSERT_EQ(run_lepus(run + " --hash all -p " + d + "/p 2> " + d + "/e"), 0);
  EXPECT_NE(read_file(d + "/e").find("creating cache_file"), std::string::npos);
  ASSERT_EQ(run_lepus(run + " -p " + d + "/p --quiet"), 0);  // back to the default hash
  ASSERT_EQ(std::system(("sleep 0.05; echo '1 |f newfeature' >> " + d + "/data.vw").c_str()), 0);
  ASSERT_EQ(run_lepus(run + " -p " + d + "/p 2> " + d + "/e"), 0);
  EXPECT_NE(read_file(d + "/e").find("creating cache_file"), std::string::npos);
  EXPECT_EQ(lines_of(read_file(d + "/p")).size(), 301u);
}

// A copy that keeps the size and the modification time (cp -p, rsync -t, touch -r) but not the labels: the cache's
// fingerprint includes the content, so it is rebuilt, never used stale (issue 43 item 3).
TEST(Cache, SameSizeAndTimeWithOtherLabelsIsRebuilt) {
  const std::string d = scratch_dir("cache_same_time");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | head -n 300 > " + d + "/data.vw").c_str()), 0);
  // Every label flipped at the same length: "-1 |" becomes " 1 |", "1 |" becomes "-1|".
  ASSERT_EQ(std::system(("sed -e 's/^-1 / 1 /;t' -e 's/^1 /-1/' " + d + "/data.vw > " + d +
                         "/flipped.vw && touch -r " + d + "/data.vw " + d + "/flipped.vw")
                            .c_str()),
            0);
  const std::string run = "-d " + d + "/data.vw --cache_file " + d + "/c --loss_function logistic";
  ASSERT_EQ(run_lepus(run + " -p " + d + "/ref --quiet"), 0);
  ASSERT_EQ(std::system(("cp -p " + d + "/flipped.vw " + d + "/data.vw").c_str()), 0);
  ASSERT_EQ(run_lepus(run + " -p " + d + "/p 2> " + d + "/e"), 0);
  EXPECT_TRUE(has(read_file(d + "/e"), "rebuilt: cache made from other data")) << read_file(d + "/e");
  ASSERT_EQ(run_lepus("-d " + d + "/flipped.vw --loss_function logistic -p " + d + "/fresh --quiet"), 0);
  EXPECT_EQ(read_file(d + "/p"), read_file(d + "/fresh"));  // what the new labels give, not the cached ones
  EXPECT_NE(read_file(d + "/p"), read_file(d + "/ref"));
}

TEST(Passes, HoldoutEveryTenthLineAndBestModel) {
  const std::string d = scratch_dir("passes");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " > " + d + "/data.vw").c_str()), 0);
  ASSERT_EQ(run_lepus("-d " + d + "/data.vw -c --passes 3 --loss_function logistic -p " + d + "/p -f " + d +
                      "/m 2> " + d + "/e"),
            0);
  const std::string e = read_file(d + "/e");
  EXPECT_EQ(lines_of(read_file(d + "/p")).size(), 3000u);  // every example of every pass
  EXPECT_NE(e.find("passes used = 3"), std::string::npos) << e;
  EXPECT_NE(e.find("number of examples per pass = 900"), std::string::npos) << e;  // every 10th held out
  EXPECT_NE(e.find(" h\n"), std::string::npos);
  EXPECT_NE(e.find("average loss = "), std::string::npos);
  EXPECT_NE(e.find(" h\nbest constant"), std::string::npos) << e;
  EXPECT_TRUE(exists(d + "/m"));
  // --holdout_off: every example learned, no holdout rows.
  ASSERT_EQ(
      run_lepus("-d " + d + "/data.vw -c --passes 2 --holdout_off --loss_function logistic 2> " + d + "/e2"),
      0);
  EXPECT_NE(read_file(d + "/e2").find("number of examples per pass = 1000"), std::string::npos);
  EXPECT_EQ(read_file(d + "/e2").find(" h\n"), std::string::npos);
  // Without a cache, passes re-read a data file (lepus allows it; stdin needs --cache_file).
  ASSERT_EQ(
      run_lepus("-d " + d + "/data.vw --passes 3 --loss_function logistic -p " + d + "/p_nocache --quiet"),
      0);
  EXPECT_EQ(read_file(d + "/p_nocache"), read_file(d + "/p"));
  EXPECT_EQ(run_lepus("--passes 2 --quiet < " + d + "/data.vw 2> " + d + "/e3"), 1);
  EXPECT_NE(read_file(d + "/e3").find("add --cache_file"), std::string::npos);
}

TEST(Passes, EarlyTerminationStopsWhenHoldoutStopsImproving) {
  const std::string d = scratch_dir("early");
  // A huge plain-SGD rate makes the holdout loss oscillate, so it stops improving quickly.
  ASSERT_EQ(run_lepus("-d " + kData + "/heart_scale.vw --cache_file " + d +
                      "/c --passes 50 --early_terminate 1 "
                      "--sgd -l 50 --loss_function logistic 2> " +
                      d + "/e"),
            0);
  const double used = summary_value(read_file(d + "/e"), "passes used");
  EXPECT_GE(used, 2.0);
  EXPECT_LT(used, 50.0);
}

}  // namespace
}  // namespace lepus::e2e
