// Crash-safe models (issue 7): lepus is killed with SIGKILL at random moments while it trains and writes
// `-f model` over an existing model. Afterwards the file is always the old complete model or the new complete
// one, and it loads; at least one kill must land inside the save itself (the temporary file is left behind),
// so the test cannot pass by killing only before or after it.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kRcv1 = LEPUS_TEST_DATA "/vw/inputs/rcv1_small.vw.gz";

pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 2);
    ::execv(LEPUS_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

TEST(CrashSafeModel, SigkillWhileWritingNeverLeavesAHalfModel) {
  const std::string d = scratch_dir("kill");
  const std::string model = d + "/model";
  // The old model, and the new one a complete run writes (runs are deterministic).
  ASSERT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -b 22 -q ff -f " + d + "/old --quiet"), 0);
  const std::vector<std::string> train = {LEPUS_BINARY,      "-d",       kRcv1, "-b",  "22",     "-q", "ff",
                                          "--loss_function", "logistic", "-f",  model, "--quiet"};
  const auto t0 = std::chrono::steady_clock::now();
  {
    const pid_t pid = spawn(train);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::rename(model, d + "/new");
  const std::string old_bytes = read_file(d + "/old");
  const std::string new_bytes = read_file(d + "/new");
  ASSERT_NE(old_bytes, new_bytes);
  ASSERT_GT(new_bytes.size(), 100000u);

  std::mt19937 rng(12345);
  // One kill at `ms` after the start over a copy of the old model: the model must be the old one or the new
  // one. Returns where the kill landed: -1 before the save (old model, no temporary file), 0 inside it (the
  // temporary file TARGET.lepus-tmp.PID is left behind: the save had begun and not yet renamed), 1 after it
  // (new model).
  int saw_old = 0, saw_new = 0, inside = 0;
  auto kill_at = [&](double ms, int i) {
    std::filesystem::copy_file(d + "/old", model, std::filesystem::copy_options::overwrite_existing);
    const pid_t pid = spawn(train);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const std::string now = read_file(model);
    EXPECT_TRUE(now == old_bytes || now == new_bytes)
        << "kill " << i << " at " << ms << " ms: model has " << now.size() << " bytes";
    (now == new_bytes ? saw_new : saw_old)++;
    const std::string tmp = model + ".lepus-tmp." + std::to_string(pid);
    if (exists(tmp)) {
      std::filesystem::remove(tmp);
      EXPECT_EQ(now, old_bytes) << "kill " << i << ": the temporary file stayed, yet the model was replaced";
      // The old model still loads after a kill inside the save.
      EXPECT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -t -i " + model + " --quiet"), 0);
      ++inside;
      return 0;
    }
    return now == new_bytes ? 1 : -1;
  };
  // 25 kills at random moments, most near the end of the run, where the model is written.
  std::uniform_real_distribution<double> when(0.5 * full_ms, 1.15 * full_ms);
  const int runs = 25;
  for (int i = 0; i < runs; ++i) kill_at(when(rng), i);
  // Then, until a kill has landed inside a save (at most 60 more), kill at a random moment between the latest
  // kill that came before the save and the earliest that came after it: the window narrows onto the save.
  double lo = 0.5 * full_ms, hi = 1.15 * full_ms;
  int extra = 0;
  for (; inside == 0 && extra < 60; ++extra) {
    const double t = std::uniform_real_distribution<double>(lo, hi)(rng);
    const int where = kill_at(t, runs + extra);
    if (where < 0) lo = t;
    if (where > 0) hi = t;
    if (hi - lo < 0.02 * full_ms) {  // timing noise: the window closed on itself, widen it again
      lo = std::max(0.0, std::min(lo, hi) - 0.05 * full_ms);
      hi = std::max(lo, hi) + 0.05 * full_ms;
    }
  }
  std::cerr << "[kill test] " << runs + extra << " SIGKILLs: old model " << saw_old << " times, new model "
            << saw_new << " times, " << inside << " inside a save, never anything else\n";
  EXPECT_GE(inside, 1) << "no kill landed inside a save in " << runs + extra << " kills (a run takes "
                       << full_ms << " ms)";
  // Both complete models load.
  EXPECT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -t -i " + d + "/old --quiet"), 0);
  EXPECT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -t -i " + d + "/new --quiet"), 0);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus::e2e
