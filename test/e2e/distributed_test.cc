// --distributed under mpirun (-np 1 and 2, loopback): one rank trains the single process's model to the bit,
// two ranks train a combined model about as good (sgd, scinol2, ftprl-diag; --sync_every), {rank} shards, and
// a rank that cannot read its shard ends the job with a message naming it (never a hang; the previous model
// file intact). Skipped cleanly without Open MPI.
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kRcv1 = std::string(LEPUS_TEST_DATA) + "/vw/inputs/rcv1_small.vw.gz";

// mpirun with what a root CI machine needs (Open MPI refuses root unless told), a bound on the whole job, and
// Open MPI's session files in the test's own folder (every caller cd's there first): two jobs started at once
// under ctest -j race to create the shared /tmp/ompi.HOST.UID and one fails ("mkdir ... File exists").
std::string mpirun(int np) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_orte_tmpdir_base=\"$PWD\" "
         "timeout 120 mpirun --oversubscribe -np " +
         std::to_string(np) + " " + LEPUS_BINARY + " --distributed ";
}

class Distributed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
    dir_ = scratch_dir("distributed");
    // A build without Open MPI says so; such a build has nothing to test here.
    if (run_in(dir_, "--distributed -d x 2> probe.err") == 1 &&
        has(read_file(dir_ + "/probe.err"), "without it"))
      GTEST_SKIP() << "lepus built without Open MPI";
    ASSERT_EQ(std::system(("zcat " + kRcv1 + " | head -800 > " + dir_ + "/train.vw").c_str()), 0);
    ASSERT_EQ(std::system(("zcat " + kRcv1 + " | tail -200 > " + dir_ + "/test.vw").c_str()), 0);
  }
  int mpi(int np, const std::string& args) {
    return std::system(("cd '" + dir_ + "' && " + mpirun(np) + args).c_str()) == 0 ? 0 : 1;
  }
  double test_loss(const std::string& model) {
    EXPECT_EQ(run_in(dir_, "-t -i " + model + " -d test.vw 2> t.err"), 0);
    return summary_value(read_file(dir_ + "/t.err"), "average loss");
  }
  std::string dir_;
};

TEST_F(Distributed, OneRankIsTheSingleProcessToTheBit) {
  // Two passes with holdout: the merge, the holdout sums and early stopping all go through the ranks' path.
  ASSERT_EQ(mpi(1, "-d train.vw --loss_function logistic --passes 3 -f np1.model 2> np1.err"), 0);
  ASSERT_EQ(
      run_in(dir_,
             "-d train.vw --learner sgd --loss_function logistic --passes 3 -f single.model 2> single.err"),
      0);
  EXPECT_EQ(read_file(dir_ + "/np1.model"), read_file(dir_ + "/single.model"));  // --distributed runs sgd
  EXPECT_TRUE(has(read_file(dir_ + "/np1.err"), "[note] --distributed merges sgd's weights"))
      << read_file(dir_ + "/np1.err");
  EXPECT_EQ(summary_value(read_file(dir_ + "/np1.err"), "average loss"),
            summary_value(read_file(dir_ + "/single.err"), "average loss"));
  // Synchronising inside the pass changes nothing for one rank: its table too is the single process's.
  ASSERT_EQ(
      mpi(1, "-d train.vw --loss_function logistic --passes 3 --sync_every 37 -f sync.model 2> sync.err"), 0);
  EXPECT_EQ(read_file(dir_ + "/sync.model"), read_file(dir_ + "/single.model"));
  auto table = [&](const std::string& f) {
    const std::string t = read_file(dir_ + "/" + f);
    return t.substr(t.find("average  since"), t.find("finished run") - t.find("average  since"));
  };
  EXPECT_EQ(table("sync.err"), table("single.err"));
}

// The table rows of a run's stderr: (example counter, average loss) of each.
std::vector<std::pair<double, double>> table_rows(const std::string& err) {
  std::vector<std::pair<double, double>> rows;
  std::istringstream in(err.substr(0, err.find("finished run")));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    double loss, since, counter;
    if (f >> loss >> since >> counter) rows.emplace_back(counter, loss);
  }
  return rows;
}

TEST_F(Distributed, SyncEveryMixesThePassAndTheTableCountsEveryRank) {
  ASSERT_EQ(mpi(2, "-d train.vw --loss_function logistic --sync_every 50 -f np2.model 2> np2.err"), 0)
      << read_file(dir_ + "/np2.err");
  const std::string err = read_file(dir_ + "/np2.err");
  EXPECT_TRUE(has(err, "models combined at the end of each pass and every 50 examples a rank reads")) << err;
  // Rows come at synchronisations, over both ranks' examples: about 100 at the first, 800 in all by the end.
  const auto rows = table_rows(err);
  ASSERT_GE(rows.size(), 3u) << err;
  EXPECT_GT(rows.front().first, 50.0) << err;
  EXPECT_LE(rows.back().first, 800.0) << err;
  EXPECT_GT(rows.back().first, 400.0) << err;
  EXPECT_EQ(summary_value(err, "number of examples"), 800.0) << err;
  if (rows.back().first == 800.0) {
    EXPECT_NEAR(rows.back().second, summary_value(err, "average loss"), 1e-6);
  }
  ASSERT_EQ(run_in(dir_, "-d train.vw --learner sgd --loss_function logistic -f single.model --quiet"), 0);
  const double single = test_loss("single.model"), merged = test_loss("np2.model");
  EXPECT_LT(merged, single * 1.15) << "single " << single << ", two ranks " << merged;
}

// The scale-free learners' merge (a weighted average per feature, never bolder than the boldest rank): two
// ranks learn about as well as one process (measured here: scinol2 0.335 against 0.340, ftprl-diag 0.373
// against 0.373).
TEST_F(Distributed, ScaleFreeLearnersMergeAsWell) {
  for (const std::string learner : {"scinol2", "ftprl-diag"}) {
    const std::string base = "-d train.vw --learner " + learner + " --loss_function logistic ";
    ASSERT_EQ(run_in(dir_, base + "-f single.model --quiet"), 0);
    ASSERT_EQ(mpi(2, base + "--sync_every 100 -f np2.model 2> np2.err"), 0) << read_file(dir_ + "/np2.err");
    const double single = test_loss("single.model"), merged = test_loss("np2.model");
    EXPECT_LT(merged, single * 1.15) << learner << ": single " << single << ", two ranks " << merged;
    EXPECT_NE(read_file(dir_ + "/np2.model"), read_file(dir_ + "/single.model")) << learner;
  }
}

TEST_F(Distributed, TwoRanksTrainAModelAsGood) {
  ASSERT_EQ(run_in(dir_, "-d train.vw --learner sgd --loss_function logistic -f single.model --quiet"), 0);
  ASSERT_EQ(mpi(2, "-d train.vw --loss_function logistic -f np2.model 2> np2.err"), 0)
      << read_file(dir_ + "/np2.err");
  const std::string err = read_file(dir_ + "/np2.err");
  EXPECT_TRUE(has(err, "distributed: 2 ranks, sharing the blocks of the data")) << err;
  EXPECT_TRUE(has(err, "merge = VW's allreduce")) << err;
  EXPECT_EQ(summary_value(err, "number of examples"), 800.0) << err;  // every rank's examples, counted once
  // sgd's merge (VW's weighted average) approximates one learner over all the data: 10% worse test loss here,
  // with 400 examples a rank and one merge (0.437 against 0.397); on a9a's 32,561 it is within 0.1% (README).
  const double single = test_loss("single.model"), merged = test_loss("np2.model");
  EXPECT_LT(merged, single * 1.15) << "single " << single << ", two ranks " << merged;
  EXPECT_NE(read_file(dir_ + "/np2.model"), read_file(dir_ + "/single.model"));
  // Shards by name: each rank its own file.
  ASSERT_EQ(
      std::system(
          ("cd '" + dir_ + "' && head -400 train.vw > part-0.vw && tail -400 train.vw > part-1.vw").c_str()),
      0);
  ASSERT_EQ(mpi(2, "-d 'part-{rank}.vw' --loss_function logistic --passes 3 -f shards.model 2> shards.err"),
            0)
      << read_file(dir_ + "/shards.err");
  EXPECT_TRUE(has(read_file(dir_ + "/shards.err"), "each its own data files"));
  const double shards = test_loss("shards.model");
  EXPECT_LT(shards, single * 1.15) << "single " << single << ", shards " << shards;
}

TEST_F(Distributed, ARankThatCannotReadItsShardEndsTheJob) {
  ASSERT_EQ(run_in(dir_, "-d train.vw --learner sgd -f m --quiet"), 0);
  const std::string before = read_file(dir_ + "/m");
  ASSERT_EQ(std::system(("cd '" + dir_ + "' && cp train.vw part-0.vw").c_str()), 0);
  EXPECT_NE(mpi(2, "-d 'part-{rank}.vw' -f m 2> fail.err"), 0);
  const std::string err = read_file(dir_ + "/fail.err");
  EXPECT_TRUE(has(err, "lepus: error: rank 1: part-1.vw: cannot open data file")) << err;
  EXPECT_EQ(read_file(dir_ + "/m"), before);  // the model file as it was
}

// scinol-full and ftprl-full --matrix sketch: the ranks' mean state, their Frequent Directions sketches
// concatenated and shrunk. heart_scale's 200 first lines, one half a rank ({rank} shards), three passes:
// 0.431 against 0.390 for one process.
TEST_F(Distributed, FullMatrixLearnersMergeTheirSketches) {
  const std::string heart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";
  ASSERT_EQ(std::system(("cd '" + dir_ + "' && head -200 " + heart + " > h.vw && tail -70 " + heart +
                         " > ht.vw && awk 'NR % 2 == 1' h.vw > h-0.vw && awk 'NR % 2 == 0' h.vw > h-1.vw")
                            .c_str()),
            0);
  const std::string base =
      "--learner scinol-full --matrix sketch --loss_function logistic --passes 3 --holdout_off ";
  ASSERT_EQ(run_in(dir_, "-d h.vw " + base + "-f single.model --quiet"), 0);
  ASSERT_EQ(mpi(2, "-d 'h-{rank}.vw' " + base + "--sync_every 20 -f np2.model 2> np2.err"), 0)
      << read_file(dir_ + "/np2.err");
  auto loss = [&](const std::string& model) {
    EXPECT_EQ(run_in(dir_, "-t -i " + model + " -d ht.vw 2> t.err"), 0);
    return summary_value(read_file(dir_ + "/t.err"), "average loss");
  };
  const double single = loss("single.model"), merged = loss("np2.model");
  EXPECT_LT(merged, single * 1.15) << "single " << single << ", two ranks " << merged;
  // ftprl-full --matrix sketch: the mean point and the merged sketch (0.4157 against 0.4150 here).
  const std::string ftprl =
      "--learner ftprl-full --matrix sketch --loss_function logistic --passes 3 --holdout_off ";
  ASSERT_EQ(run_in(dir_, "-d h.vw " + ftprl + "-f single_f.model --quiet"), 0);
  ASSERT_EQ(mpi(2, "-d 'h-{rank}.vw' " + ftprl + "--sync_every 20 -f np2_f.model 2> np2_f.err"), 0)
      << read_file(dir_ + "/np2_f.err");
  const double single_f = loss("single_f.model"), merged_f = loss("np2_f.model");
  EXPECT_LT(merged_f, single_f * 1.15) << "single " << single_f << ", two ranks " << merged_f;
  // --matrix full keeps S's pseudo-inverse, which has no merge: refused before any work.
  EXPECT_EQ(run_in(dir_, "--distributed -d h.vw --learner scinol-full 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "with --matrix sketch only")) << read_file(dir_ + "/e");
}

// -p, -r and caches per rank: {rank} in their names (or, for -c, in the data names).
TEST_F(Distributed, PerRankPredictionsAndCaches) {
  ASSERT_EQ(std::system(
                ("cd '" + dir_ + "' && head -300 train.vw > s-0.vw && tail -500 train.vw > s-1.vw").c_str()),
            0);
  const std::string base = "-d 's-{rank}.vw' --loss_function logistic --passes 2 --holdout_off ";
  ASSERT_EQ(mpi(2, base + "-c -p 'p-{rank}.txt' -r 'r-{rank}.txt' -f a.model 2> a.err"), 0)
      << read_file(dir_ + "/a.err");
  // Each rank predicted its own shard, every pass (as VW writes -p): 2 x 300 and 2 x 500 lines.
  auto lines = [&](const std::string& f) {
    const std::string t = read_file(dir_ + "/" + f);
    return std::count(t.begin(), t.end(), '\n');
  };
  EXPECT_EQ(lines("p-0.txt"), 600);
  EXPECT_EQ(lines("p-1.txt"), 1000);
  EXPECT_EQ(lines("r-1.txt"), 1000);
  EXPECT_TRUE(has(read_file(dir_ + "/a.err"), "creating cache_file = s-0.vw.cache"))
      << read_file(dir_ + "/a.err");
  // The second run reads each rank's cache and trains the same model.
  ASSERT_EQ(mpi(2, base + "-c -f b.model 2> b.err"), 0) << read_file(dir_ + "/b.err");
  EXPECT_TRUE(has(read_file(dir_ + "/b.err"), "using cache_file = s-0.vw.cache"))
      << read_file(dir_ + "/b.err");
  EXPECT_EQ(read_file(dir_ + "/b.model"), read_file(dir_ + "/a.model"));
  // The ranks sharing one file's blocks, each with its own --cache_file: the same again.
  ASSERT_EQ(
      mpi(2, "-d train.vw --loss_function logistic --passes 2 --cache_file 'c-{rank}' -f c.model 2> c.err"),
      0)
      << read_file(dir_ + "/c.err");
  ASSERT_EQ(
      mpi(2, "-d train.vw --loss_function logistic --passes 2 --cache_file 'c-{rank}' -f d.model 2> d.err"),
      0);
  EXPECT_TRUE(has(read_file(dir_ + "/d.err"), "using cache_file = c-0")) << read_file(dir_ + "/d.err");
  EXPECT_EQ(read_file(dir_ + "/d.model"), read_file(dir_ + "/c.model"));
}

TEST_F(Distributed, ARankKilledMidPassEndsTheJob) {
  // Rank 1 reads a pipe that never delivers and is killed (SIGKILL) while rank 0, its shard learned, waits
  // for it in the pass-end synchronisation: the job must end, naming the rank, well before the time bound,
  // and the model file saved before stays as it was.
  ASSERT_EQ(run_in(dir_, "-d train.vw --learner sgd -f m --quiet"), 0);
  const std::string before = read_file(dir_ + "/m");
  const std::string script =
      "cd '" + dir_ +
      "' && cp train.vw doomed-0.vw && mkfifo doomed-1.vw && "
      "{ sleep 60 > doomed-1.vw & writer=$!; "
      "start=$(date +%s); " +
      mpirun(2) +
      "-d 'doomed-{rank}.vw' -f m 2> kill.err & job=$!; "
      "for i in $(seq 300); do "
      // Rank 1 of this test's job only: its data name, its working directory (tests run side by side).
      "  for p in $(pgrep -f 'distributed -d doomed-'); do "
      "    [ \"$(readlink /proc/$p/cwd)\" = \"$(pwd -P)\" ] || continue; "
      "    if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1; then kill -9 "
      "$p; k=1; fi; "
      "  done; [ -n \"$k\" ] && break; sleep 0.1; "
      "done; wait $job; echo $? > rc; echo $(( $(date +%s) - start )) > took; kill $writer 2>/dev/null; "
      "wait; }";
  ASSERT_EQ(std::system(script.c_str()), 0);
  const int rc = std::stoi(read_file(dir_ + "/rc"));
  const std::string err = read_file(dir_ + "/kill.err");
  EXPECT_NE(rc, 0) << err;
  EXPECT_NE(rc, 124) << "the job hung until the time bound: " << err;
  EXPECT_LT(std::stoi(read_file(dir_ + "/took")), 60) << err;
  EXPECT_TRUE(has(err, "rank 1")) << err;
  EXPECT_EQ(read_file(dir_ + "/m"), before);
}

TEST_F(Distributed, ARankStuckPastSyncTimeoutEndsTheJob) {
  // Rank 1 reads a pipe that never delivers (a stalled read): alive, so mpirun would wait for ever; rank 0
  // waits in the end-of-pass combination, sees rank 1 silent past --sync_timeout and ends the job naming rank
  // 1, the previous model file intact.
  ASSERT_EQ(run_in(dir_, "-d train.vw --learner sgd -f m --quiet"), 0);
  const std::string before = read_file(dir_ + "/m");
  const std::string script = "cd '" + dir_ +
                             "' && cp train.vw part-0.vw && mkfifo part-1.vw && "
                             "{ sleep 60 > part-1.vw & writer=$!; " +
                             mpirun(2) +
                             "-d 'part-{rank}.vw' -f m --sync_timeout 2 2> stuck.err; echo $? > rc; "
                             "kill $writer 2>/dev/null; wait; }";
  ASSERT_EQ(std::system(script.c_str()), 0);
  const std::string err = read_file(dir_ + "/stuck.err");
  EXPECT_EQ(std::stoi(read_file(dir_ + "/rc")), 1) << err;  // not 124: timeout's bound was not reached
  EXPECT_TRUE(has(err,
                  "lepus: error: rank 0: rank 1 is stuck: not in synchronisation 1 with the others and no "
                  "sign of life for 2"))
      << err;
  EXPECT_TRUE(has(err, "(--sync_timeout 2; --sync_timeout 0 waits for ever)")) << err;
  EXPECT_EQ(read_file(dir_ + "/m"), before);
}

// The stuck rank is named whichever it is: with rank 0 stalled, rank 1 (which hears rank 0's signs of life)
// ends the job naming rank 0. Learning ranks, however slow, are never stuck: rank 1's long shard (every line
// 150 times, with -q ff) keeps rank 0 waiting several times the limit without ending the job.
TEST_F(Distributed, ARankStuckIsNamedWhicheverItIs) {
  const std::string script = "cd '" + dir_ +
                             "' && cp train.vw zero-1.vw && mkfifo zero-0.vw && "
                             "{ sleep 60 > zero-0.vw & writer=$!; " +
                             mpirun(2) +
                             "-d 'zero-{rank}.vw' --sync_timeout 2 2> zero.err; echo $? > rc; "
                             "kill $writer 2>/dev/null; wait; }";
  ASSERT_EQ(std::system(script.c_str()), 0);
  const std::string err = read_file(dir_ + "/zero.err");
  EXPECT_EQ(std::stoi(read_file(dir_ + "/rc")), 1) << err;
  EXPECT_TRUE(has(err, "lepus: error: rank 1: rank 0 is stuck")) << err;

  ASSERT_EQ(std::system(("cd '" + dir_ +
                         "' && head -20 train.vw > long-0.vw && for i in $(seq 150); do cat train.vw; "
                         "done > long-1.vw")
                            .c_str()),
            0);
  ASSERT_EQ(mpi(2, "-d 'long-{rank}.vw' -q ff --sync_timeout 1 -f long.model 2> long.err"), 0)
      << read_file(dir_ + "/long.err");
}

TEST_F(Distributed, LearnersWithoutASoundMergeRefuse) {
  EXPECT_EQ(run_in(dir_, "--distributed -d train.vw --learner aioli --loss_function logistic 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "no sound merge")) << read_file(dir_ + "/e");
  EXPECT_EQ(run_in(dir_, "--distributed -d train.vw -p preds 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "put {rank} in its name for a file per rank"))
      << read_file(dir_ + "/e");
  EXPECT_EQ(run_in(dir_, "--distributed -d train.vw -c 2> e"),
            1);  // every rank's cache would be train.vw.cache
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "--cache_file NAME{rank}")) << read_file(dir_ + "/e");
  EXPECT_EQ(run_in(dir_, "--distributed -d train.vw --audit 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "not combined across ranks")) << read_file(dir_ + "/e");
  EXPECT_EQ(run_in(dir_, "-d train.vw --sync_every 10 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "add --distributed")) << read_file(dir_ + "/e");
  EXPECT_EQ(run_in(dir_, "--distributed -d train.vw --sync_timeout -1 2> e"), 1);
  EXPECT_TRUE(has(read_file(dir_ + "/e"), "--sync_timeout must be")) << read_file(dir_ + "/e");
}

}  // namespace
}  // namespace lepus::e2e
