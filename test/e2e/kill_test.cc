// Crash-safe models (issue 7): lepus is killed with SIGKILL at random moments while it trains and writes
// `-f model` over an existing model. Afterwards the file is always the old complete model or the new complete one,
// and it loads.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
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
  const std::vector<std::string> train = {LEPUS_BINARY, "-d", kRcv1, "-b", "22", "-q", "ff",
                                          "--loss_function", "logistic", "-f", model, "--quiet"};
  const auto t0 = std::chrono::steady_clock::now();
  {
    const pid_t pid = spawn(train);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double full_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::rename(model, d + "/new");
  const std::string old_bytes = read_file(d + "/old");
  const std::string new_bytes = read_file(d + "/new");
  ASSERT_NE(old_bytes, new_bytes);
  ASSERT_GT(new_bytes.size(), 100000u);

  std::mt19937 rng(12345);
  // Most kills land near the end of the run, where the model is written.
  std::uniform_real_distribution<double> when(0.5 * full_ms, 1.15 * full_ms);
  int saw_old = 0, saw_new = 0, runs = 25;
  for (int i = 0; i < runs; ++i) {
    std::filesystem::copy_file(d + "/old", model, std::filesystem::copy_options::overwrite_existing);
    const pid_t pid = spawn(train);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(when(rng) * 1000)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const std::string now = read_file(model);
    ASSERT_TRUE(now == old_bytes || now == new_bytes) << "kill " << i << ": model has " << now.size() << " bytes";
    (now == new_bytes ? saw_new : saw_old)++;
  }
  std::cerr << "[kill test] " << runs << " SIGKILLs: old model " << saw_old << " times, new model " << saw_new
            << " times, never anything else\n";
  // Both complete models load.
  EXPECT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -t -i " + d + "/old --quiet"), 0);
  EXPECT_EQ(run_lepus("-d " LEPUS_TEST_DATA "/heart_scale.vw -t -i " + d + "/new --quiet"), 0);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus::e2e
