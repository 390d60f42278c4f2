// --learner mix through the binary on rcv1_small (logistic): the mixture's progressive loss is within ln K /
// T of its best member run alone, the summary names each member with its weight and loss, and the saved model
// predicts with -t -i (twice alike, and better than the constant).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "e2e_util.h"
#include "raw_pixels.h"

namespace lepus::e2e {
namespace {

const std::string kRcv1 = std::string(LEPUS_TEST_DATA) + "/vw/inputs/rcv1_small.vw.gz";

double loss_of(const std::string& log) { return summary_value(read_file(log), "average loss"); }

TEST(MixCli, Rcv1SmallWithinLnKOfTheBestMember) {
  const std::string d = scratch_dir("mix_rcv1");
  const std::string common = kRcv1 + " --loss_function logistic";
  ASSERT_EQ(run_lepus(common + " --learner mix -f " + d + "/m -p " + d + "/run.p 2> " + d + "/log"), 0)
      << read_file(d + "/log");
  const std::string log = read_file(d + "/log");
  double best = 1e9;
  // Each default member and the same learner run alone.
  const std::pair<std::string, std::string> members[] = {
      {"sgd", "sgd"},
      {"scinol2", "scinol2"},
      {"vw-pistol", "vw-pistol"},
      {"vw-coin", "vw-coin"},
      {"aioli:max_dense_features=64:beyond_dense=diag", "aioli --max_dense_features 64 --beyond_dense diag"}};
  for (const auto& [member, alone] : members) {
    const std::string out = d + "/" + member.substr(0, member.find(':')) + ".log";
    ASSERT_EQ(run_lepus(common + " --learner " + alone + " 2> " + out), 0);
    best = std::min(best, loss_of(out));
    EXPECT_TRUE(has(log, "mix member " + member + ": weight = ")) << log;
  }
  const double mix = loss_of(d + "/log");
  EXPECT_TRUE(has(log, "mix regret against its best member = ")) << log;
  EXPECT_TRUE(has(log, "(bound 1.60944)")) << log;  // ln 5
  // 1000 examples, K = 5; the summary prints 6 decimals.
  EXPECT_LE(mix, best + std::log(5.0) / 1000.0 + 1e-6);
  EXPECT_LT(mix, 0.40);  // measured 0.368889 (scinol2 alone: 0.367279)

  ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kRcv1 + " -p " + d + "/a.p 2> " + d + "/t1"), 0)
      << read_file(d + "/t1");
  ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kRcv1 + " -p " + d + "/b.p 2> " + d + "/t2"), 0);
  EXPECT_EQ(read_file(d + "/a.p"), read_file(d + "/b.p"));
  EXPECT_EQ(read_predictions(d + "/a.p").size(), 1000u);
  EXPECT_LT(loss_of(d + "/t1"), mix);  // the final model on the data it learned
}

// The members learn in parallel (each example's rounds run on as many threads as --threads allows): the
// progressive predictions, the summary's losses and the saved model are byte-identical for one thread and for
// several, with the retirement path included (-q ff: scinol-full passes its dense cap on the first example).
// A member that sizes a default from its first examples (wemm's b = 2 X^2) is warmed up on them inside the
// mixture as when it runs alone: a one-member mixture predicts as the member (wemm's b was once sized from
// one example in a mixture).
TEST(MixCli, AMemberIsWarmedUpAsAlone) {
  const std::string d = scratch_dir("mix_warmup");
  const std::string abalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";
  ASSERT_EQ(run_lepus(abalone + " --learner wemm -p " + d + "/alone.p 2> " + d + "/log"), 0)
      << read_file(d + "/log");
  ASSERT_EQ(run_lepus(abalone + " --learner mix --mix wemm -p " + d + "/mix.p 2> " + d + "/log"), 0)
      << read_file(d + "/log");
  EXPECT_EQ(read_file(d + "/alone.p"), read_file(d + "/mix.p"));
}

TEST(MixCli, SameResultsForAnyThreadCount) {
  const std::string d = scratch_dir("mix_threads");
  for (const std::string extra : {"", " -q ff --mix sgd,scinol-full,aioli:matrix=diag"}) {
    SCOPED_TRACE(extra);
    for (const std::string t : {"1", "2", "4"}) {
      ASSERT_EQ(run_lepus(kRcv1 + " --loss_function logistic --learner mix --threads " + t + extra + " -f " +
                          d + "/m" + t + " -p " + d + "/p" + t + " 2> " + d + "/log" + t),
                0)
          << read_file(d + "/log" + t);
    }
    for (const std::string t : {"2", "4"}) {
      EXPECT_EQ(read_file(d + "/p1"), read_file(d + "/p" + t)) << t;
      EXPECT_EQ(read_file(d + "/m1"), read_file(d + "/m" + t)) << t;
      EXPECT_EQ(loss_of(d + "/log1"), loss_of(d + "/log" + t)) << t;
    }
    EXPECT_EQ(read_predictions(d + "/p1").size(), 1000u);
  }
}

// Pruning (--mix_prune, default 40) on rcv1_small three times over (3,000 examples: checks at 1,024 and 2,048):
// the members far behind scinol2 stop learning, and the run predicts exactly as without pruning, for any thread
// count, one example at a time (--audit) as in blocks, and resumed from a model saved between the checks.
TEST(MixCli, PrunedMembersChangeNoPrediction) {
  const std::string d = scratch_dir("mix_prune");
  const std::string data = d + "/r3.vw.gz";
  ASSERT_EQ(std::system(("zcat " + kRcv1 + " " + kRcv1 + " " + kRcv1 + " | gzip > " + data).c_str()), 0);
  const std::string common = data + " --loss_function logistic --learner mix";
  ASSERT_EQ(run_lepus(common + " --mix_prune 0 -p " + d + "/all.p 2> " + d + "/all.log"), 0);
  for (const std::string t : {"1", "2"}) {
    ASSERT_EQ(run_lepus(common + " --threads " + t + " -p " + d + "/p" + t + " -f " + d + "/m" + t + " 2> " +
                        d + "/log" + t),
              0)
        << read_file(d + "/log" + t);
    EXPECT_EQ(read_file(d + "/p" + t), read_file(d + "/all.p")) << t;
  }
  ASSERT_EQ(run_lepus(common + " --audit -p " + d + "/audit.p -f " + d + "/audit.m > /dev/null 2>&1"), 0);
  EXPECT_EQ(read_file(d + "/audit.p"), read_file(d + "/all.p"));
  EXPECT_EQ(read_file(d + "/audit.m"), read_file(d + "/m1"));
  EXPECT_EQ(read_file(d + "/m2"), read_file(d + "/m1"));
  const std::string log = read_file(d + "/log1");
  EXPECT_TRUE(has(log, "mix member sgd: retired at learning example 1024: pruned: weight ")) << log;
  EXPECT_TRUE(has(log, "mix member scinol2: weight = 1")) << log;
  EXPECT_FALSE(has(read_file(d + "/all.log"), "pruned")) << read_file(d + "/all.log");
  expect_resumed_equals_one_run(d, data, 1500, {"--loss_function logistic --learner mix"});
}

// The default learner is the mixture (issue 38): the preamble names it and the summary shows its members; a
// model it saves is a mixture's. A command line tuning VW's default learner runs sgd, VW's learner, and says so in
// one line; an -i model keeps its own learner; the mixture itself refuses sgd's options.
TEST(DefaultLearner, IsTheMixtureUnlessVwsLearnerIsTuned) {
  const std::string d = scratch_dir("default_learner");
  const std::string data = kRcv1 + " --loss_function logistic";
  ASSERT_EQ(run_lepus(data + " -f " + d + "/m 2> " + d + "/log"), 0);
  const std::string log = read_file(d + "/log");
  EXPECT_TRUE(has(log, "\nlearner = mix\n")) << log;
  EXPECT_TRUE(has(log, "mix member scinol2: ")) << log;
  EXPECT_FALSE(has(log, "[note]")) << log;
  ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kRcv1 + " 2> " + d + "/t"), 0);
  EXPECT_TRUE(has(read_file(d + "/t"), "\nlearner = mix\n")) << read_file(d + "/t");
  for (const std::string o :
       {"-l 0.5", "--learning_rate 0.5", "--power_t 0.5", "--initial_t 1", "--decay_learning_rate 1", "--sgd",
        "--adaptive", "--normalized", "--invariant", "--l1 1e-9", "--l2 1e-9", "--min_prediction -50",
        "--max_prediction 50", "--vw_exact"}) {
    SCOPED_TRACE(o);
    ASSERT_EQ(run_lepus(data + " " + o + " -f " + d + "/s 2> " + d + "/log"), 0) << read_file(d + "/log");
    const std::string tuned = read_file(d + "/log");
    EXPECT_TRUE(has(tuned, "\nlearner = sgd\n")) << tuned;
    const std::string name = o == "-l 0.5" ? "learning_rate" : o.substr(2, o.find(' ') - 2);
    EXPECT_TRUE(
        has(tuned, "[note] --" + name +
                       " tunes VW's default learner: lepus runs --learner sgd (VW's; lepus's default is "
                       "--learner mix)"))
        << tuned;
    // The model is sgd's, as --learner sgd would save it; resuming it keeps sgd without a note.
    ASSERT_EQ(run_lepus(data + " --learner sgd " + o + " -f " + d + "/e 2> /dev/null"), 0);
    EXPECT_EQ(read_file(d + "/s"), read_file(d + "/e"));
  }
  ASSERT_EQ(run_lepus("-i " + d + "/s " + kRcv1 + " 2> " + d + "/r"), 0);
  EXPECT_TRUE(has(read_file(d + "/r"), "\nlearner = sgd\n")) << read_file(d + "/r");
  EXPECT_FALSE(has(read_file(d + "/r"), "[note]")) << read_file(d + "/r");
  EXPECT_EQ(run_lepus(data + " --learner mix -l 0.5 2> " + d + "/err"), 1);
  EXPECT_TRUE(has(read_file(d + "/err"), "--learning_rate is an option of --learner sgd"))
      << read_file(d + "/err");
}

// Members take options after their name; an option the member does not have, or a bad value, is refused.
TEST(MixCli, MembersTakeOptions) {
  const std::string d = scratch_dir("mix_member_options");
  ASSERT_EQ(
      run_lepus(kRcv1 + " --loss_function logistic --learner mix --mix sgd,aioli:matrix=diag:aioli_o2b 2> " +
                d + "/log"),
      0)
      << read_file(d + "/log");
  EXPECT_TRUE(has(read_file(d + "/log"), "aioli:matrix=diag:aioli_o2b: matrix = diag"))
      << read_file(d + "/log");
  for (const std::string bad : {"aioli:rank=0", "aioli:nosuch=1", "aioli:matrix", "aioli:aioli_o2b=1"}) {
    EXPECT_EQ(
        run_lepus(kRcv1 + " --loss_function logistic --learner mix --mix sgd," + bad + " 2> " + d + "/e"), 1)
        << bad;
    EXPECT_TRUE(has(read_file(d + "/e"), "--mix")) << bad << ": " << read_file(d + "/e");
  }
}

// With the squared loss the default members are those its rows put in the default mixture under it (aioli
// joins for the logistic loss only): the run works and the summary names four members. A list the user names
// runs aioli's squared rule; a member that refuses the loss is an error.
TEST(MixCli, DefaultMembersFollowTheLoss) {
  const std::string d = scratch_dir("mix_squared");
  ASSERT_EQ(run_lepus(kRcv1 + " --learner mix 2> " + d + "/log"), 0) << read_file(d + "/log");
  const std::string log = read_file(d + "/log");
  for (const std::string member : {"sgd", "scinol2", "vw-pistol", "vw-coin"})
    EXPECT_TRUE(has(log, "mix member " + member + ": weight = ")) << log;
  EXPECT_FALSE(has(log, "mix member aioli")) << log;
  EXPECT_EQ(run_lepus(kRcv1 + " --learner mix --mix sgd,aioli 2> " + d + "/log1"), 0)
      << read_file(d + "/log1");
  EXPECT_TRUE(has(read_file(d + "/log1"), "mix member aioli: weight = ")) << read_file(d + "/log1");
  EXPECT_NE(run_lepus(kRcv1 + " --learner mix --mix sgd,aioli-kernel 2> " + d + "/log2"), 0);
  EXPECT_TRUE(has(read_file(d + "/log2"), "does not accept the squared loss")) << read_file(d + "/log2");
}

// Under --oaa / --csoaa each class's mixture has the class members (vw-pistol and vw-coin left out: they carry
// no weight in the per-class problems), aioli among them under the logistic loss; --mix names any list.
TEST(MixCli, ClassMixturesHaveTheClassMembers) {
  const std::string d = scratch_dir("mix_oaa");
  const std::string mnist = "-d " + std::string(LEPUS_TEST_DATA) + "/vw/inputs/mnist500.vw.gz --oaa 10";
  auto members = [&](const std::string& options) {
    EXPECT_EQ(run_lepus(mnist + options + " 2> " + d + "/log"), 0) << read_file(d + "/log");
    for (const auto& line : lines_of(read_file(d + "/log")))
      if (line.starts_with("mix = ")) return line.substr(6);
    return std::string("(none)");
  };
  EXPECT_EQ(members(""), "sgd,scinol2");
  EXPECT_EQ(members(" --loss_function logistic"),
            "sgd,scinol2,aioli:max_dense_features=64:beyond_dense=diag");
  EXPECT_EQ(members(" --mix sgd,vw-coin"), "sgd,vw-coin");
}

// A member past its capacity leaves the mixture and the run goes on: rcv1_small with -q ff has more distinct
// features than scinol-full's dense cap (4096), so scinol-full retires at the first example; the summary says
// so, the model keeps it and predicts with -t.
TEST(MixCli, AMemberPastItsCapRetires) {
  const std::string d = scratch_dir("mix_retire");
  const std::string o = " -q ff --loss_function logistic --learner mix --mix sgd,scinol-full";
  ASSERT_EQ(run_lepus(kRcv1 + o + " -f " + d + "/m 2> " + d + "/log"), 0) << read_file(d + "/log");
  const std::string retired = "mix member scinol-full: retired at learning example 1: ";
  EXPECT_TRUE(has(read_file(d + "/log"), retired)) << read_file(d + "/log");
  ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kRcv1 + " -p " + d + "/p 2> " + d + "/t"), 0)
      << read_file(d + "/t");
  EXPECT_TRUE(has(read_file(d + "/t"), retired)) << read_file(d + "/t");
  EXPECT_EQ(read_predictions(d + "/p").size(), 1000u);
}

// Training on the first half, saving, and continuing on the rest from the model predicts exactly as one
// uninterrupted run (members, weights and Fixed Share's state all resume), with the default members and with
// Fixed Share.
TEST(MixCli, ResumedRunPredictsAsTheUninterruptedOne) {
  const std::string o = "--loss_function logistic --learner mix --mix_share ";
  expect_resumed_equals_one_run(scratch_dir("mix_resume"), kRcv1, 400, {o + "0", o + "0.01"});
}

// Online to batch on a sorted file: heart_scale sorted by label (the -1 rows, then the +1 rows). The saved default
// mixture weighs its members by how their final models predict a sample of the whole file, not by their online
// losses (won by members whose final models have seen only +1 rows for a while): its loss on the file is below
// sgd's and below the online weights' (--mix_validation 0, hedged as before by 0.5). Measured 0.814, 0.910, 1.571.
TEST(MixCli, SavedModelWeighsFinalModelsOnTheWholeStream) {
  const std::string d = scratch_dir("mix_sorted");
  const std::string heart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";
  ASSERT_EQ(std::system(("sort -k1,1n '" + heart + "' > '" + d + "/sorted.vw'").c_str()), 0);
  auto test_loss = [&](const std::string& options, const std::string& name) {
    const std::string train = d + "/sorted.vw --loss_function logistic " + options + " -f " + d + "/" + name;
    EXPECT_EQ(run_lepus(train + " 2> " + d + "/" + name + ".train"), 0)
        << read_file(d + "/" + name + ".train");
    EXPECT_EQ(run_lepus("-t -i " + d + "/" + name + " " + heart + " 2> " + d + "/" + name + ".log"), 0);
    return loss_of(d + "/" + name + ".log");
  };
  const double mix = test_loss("--learner mix", "mix");
  const double sgd = test_loss("--learner sgd", "sgd");
  const double online = test_loss("--learner mix --mix_validation 0 --mix_test_share 0.5", "online");
  EXPECT_LT(mix, 0.95 * sgd);
  EXPECT_LT(mix, 0.7 * online);
  EXPECT_TRUE(
      has(read_file(d + "/mix.train"), "mix member aioli:max_dense_features=64:beyond_dense=diag: weight = "))
      << read_file(d + "/mix.train");
  EXPECT_TRUE(has(read_file(d + "/mix.log"), ", validation loss = ")) << read_file(d + "/mix.log");
}

// No default member breaks on raw data (issue 38): raw pixels (0-255) and the same pixels divided by 255 learn
// alike (raw_pixels.h: test errors within 0.01, both well below the best constant's) for the default mixture and
// its first-order members (aioli's test is in second_order_test.cc). vw-pistol is VW's --pistol, whose fixed
// prior is scale-dependent by design: PistolIsTheScaleDependentMember.
TEST(MixCli, RawPixelsLearnAsScaled) {
  const PixelSets sets = write_pixel_sets("mix_raw_pixels");
  for (const char* learner : {"--learner mix", "--learner sgd", "--learner scinol2", "--learner vw-coin"})
    expect_raw_learns_as_scaled(sets, learner);
}

// ... and where the mixture covers for one: vw-pistol alone is more than 0.01 apart on raw and divided pixels,
// the mixture (above) is not.
TEST(MixCli, PistolIsTheScaleDependentMember) {
  const PixelSets sets = write_pixel_sets("mix_raw_pixels_pistol");
  const PixelErrors e = pixel_test_errors(sets, "--learner vw-pistol");
  EXPECT_GT(std::fabs(e.raw - e.unit), 0.01) << "raw " << e.raw << ", divided by 255 " << e.unit;
}

// A cut model file is refused with an error, not a crash.
TEST(MixCli, TruncatedModelIsRefused) {
  const std::string d = scratch_dir("mix_cut");
  ASSERT_EQ(run_lepus(kRcv1 + " --loss_function logistic --learner mix -f " + d + "/m --quiet"), 0);
  const std::string cut = "head -c 3000 '" + d + "/m' > '" + d + "/cut.m'";
  ASSERT_EQ(std::system(cut.c_str()), 0);
  EXPECT_EQ(run_lepus("-t -i " + d + "/cut.m " + kRcv1 + " 2> " + d + "/e"), 1) << read_file(d + "/e");
}

}  // namespace
}  // namespace lepus::e2e
