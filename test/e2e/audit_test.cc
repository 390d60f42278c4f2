// --audit, --invert_hash and --audit_regressor against VW 9.11.2's own outputs (slices in test/data; the whole
// oracle set under ../shared when it is there), and what they promise beyond the oracles.
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;
const std::string kShared = LEPUS_SHARED_DIR "/oracles/vw";

// Runs lepus in dir with args; its stdout is returned (stderr goes to dir/err), and the exit status must be 0.
std::string stdout_of(const std::string& dir, const std::string& args) {
  EXPECT_EQ(run_in(dir, args + " > out 2> err"), 0) << args << "\n" << read_file(dir + "/err");
  return read_file(dir + "/out");
}

// The slot lines of a readable model (VW's or lepus's): every line from the first "[name:]slot:weight ..." one on,
// the header (whose global figures are each program's own) left out.
std::vector<std::string> slot_lines(const std::string& text) {
  static const std::regex kSlotLine(R"(^([^ ]*:)?[0-9]+:[-+0-9.e]+( .*)?$)");
  std::vector<std::string> out;
  bool on = false;
  for (const auto& l : lines_of(text)) {
    on = on || std::regex_match(l, kSlotLine);
    if (on) out.push_back(l);
  }
  return out;
}

// VW's lines without its "[info]" ones (05's stdout opens with one).
std::string without_info(const std::string& text) {
  std::string out;
  for (const auto& l : lines_of(text))
    if (l.rfind("[info]", 0) != 0) out += l + "\n";
  return out;
}

// One --audit feature line: the sum of value * weight over its TAB-separated name:slot:value:weight[@state] items
// (names hold no ':' in these sets); `with_state` counts the items with an '@'.
double weighted_sum(const std::string& line, size_t* with_state = nullptr) {
  std::stringstream items(line);
  double sum = 0.0;
  for (std::string item; std::getline(items, item, '\t');) {
    if (item.empty()) continue;
    std::vector<std::string> p;
    std::stringstream ss(item);
    for (std::string t; std::getline(ss, t, ':');) p.push_back(t);
    EXPECT_EQ(p.size(), 4u) << item;
    if (p.size() != 4) continue;
    const size_t at = p[3].find('@');
    if (with_state) *with_state += at != std::string::npos;
    sum += std::stod(p[2]) * std::stod(p[3].substr(0, at));
  }
  return sum;
}

TEST(Audit, SmsLinesAreVws) {
  const std::string d = scratch_dir("audit_sms");
  const std::string in = kData + "/vw/text/sms20.vw";
  EXPECT_EQ(stdout_of(d, "-d " + in + " --loss_function logistic --sgd -l 0.5 --audit"),
            read_file(kData + "/vw/text/04_audit.stdout"));
  EXPECT_EQ(stdout_of(d, "-d " + in + " --loss_function logistic --sgd -l 0.5 --audit --ngram 2"),
            without_info(read_file(kData + "/vw/text/05_audit_ngram2.stdout")));
}

TEST(Audit, CraftedNamesAndInteractionsAreVws) {
  const std::string d = scratch_dir("audit_crafted");
  const std::string in = kData + "/hashes/crafted.vw";
  EXPECT_EQ(stdout_of(d, "-d " + in + " --learner sgd -b 18 -q ff -q xy --cubic xyz -t --audit --quiet"),
            read_file(kData + "/hashes/audit.stdout"));
  EXPECT_EQ(stdout_of(d, "-d " + in + " --learner sgd -b 18 --hash_seed 7 -q ff -t --audit --quiet"),
            read_file(kData + "/hashes/audit_hash_seed7.stdout"));
  EXPECT_EQ(stdout_of(d, "-d " + in + " --learner sgd -b 18 -q :: -t --audit --quiet"),
            read_file(kData + "/hashes/audit_wildcard.stdout"));
}

TEST(Audit, InvertHashIsVwsReadableModelWithNames) {
  const std::string d = scratch_dir("invert_crafted");
  ASSERT_EQ(
      run_in(d, "-d " + kData +
                    "/hashes/crafted.vw --learner sgd -b 18 -q ff -q xy --cubic xyz --invert_hash ih.txt "
                    "--quiet"),
      0);
  EXPECT_EQ(read_file(d + "/ih.txt"),
            read_file(kData + "/hashes/invert_hash.txt"));  // VW's file, byte for byte
  EXPECT_EQ(slot_lines(read_file(d + "/ih.txt")).size(), 96u);
}

// The default learner while it learns: each feature also shows its adaptive sum after '@' (VW's layout), and the
// weights shown are the ones the prediction used: sum weight * value = the raw score (-r), before the update.
TEST(Audit, WeightsShownAreTheOnesThePredictionUsed) {
  const std::string d = scratch_dir("audit_sum");
  ASSERT_EQ(
      run_in(d, "-d " + kData +
                    "/vw/text/sms20.vw --learner sgd --loss_function logistic -q ww --audit -r raw > out "
                    "2> err"),
      0);
  const auto lines = lines_of(read_file(d + "/out"));
  const auto raw = read_predictions(d + "/raw");
  ASSERT_EQ(lines.size(), 2 * raw.size());
  size_t with_state = 0;
  for (size_t e = 0; e < raw.size(); ++e) {
    const double sum = weighted_sum(lines[2 * e + 1], &with_state);
    EXPECT_NEAR(sum, raw[e], 1e-4 + 1e-4 * std::fabs(raw[e])) << "example " << e + 1;
  }
  EXPECT_GT(with_state, 0u);
}

// Every learner with a weight per slot shows the weights its predictions use: after training, a -t run's audit
// weights times values add up to each raw score (repeated words included). The others say what they show.
TEST(Audit, EveryPerSlotLearnerShowsWeightsThatAddUp) {
  const std::string d = scratch_dir("audit_learners");
  const std::string in = kData + "/vw/text/sms20.vw";
  for (const std::string learner : {"sgd", "scinol2", "scinol1", "ftprl-diag", "ftprl-const", "ftprl-scale",
                                    "nlms", "vw-ftrl", "vw-pistol", "vw-coin"}) {
    const std::string loss = learner == "nlms" ? "" : " --loss_function logistic";
    ASSERT_EQ(run_in(d, "-d " + in + " --learner " + learner + loss + " -q ww -f m --quiet"), 0) << learner;
    ASSERT_EQ(run_in(d, "-d " + in + " -t -i m --audit -r raw > out 2> err"), 0)
        << learner << read_file(d + "/err");
    const auto lines = lines_of(read_file(d + "/out"));
    const auto raw = read_predictions(d + "/raw");
    ASSERT_EQ(lines.size(), 2 * raw.size()) << learner;
    for (size_t e = 0; e < raw.size(); ++e) {
      const double sum = weighted_sum(lines[2 * e + 1]);
      EXPECT_NEAR(sum, raw[e], 1e-4 + 1e-4 * std::fabs(raw[e])) << learner << " example " << e + 1;
    }
  }
  for (const std::string learner : {"aioli", "scinol-coord"}) {
    ASSERT_EQ(
        run_in(d, "-d " + in + " --learner " + learner + " --loss_function logistic --audit > out 2> err"),
        0);
    EXPECT_TRUE(has(read_file(d + "/err"), "keeps no weight per slot")) << learner;
    const auto lines = lines_of(read_file(d + "/out"));
    ASSERT_GE(lines.size(), 2u);
    EXPECT_TRUE(has(lines[1], "\tw^go:78252:1\t")) << lines[1];  // name:slot:value
  }
}

// --audit_regressor names every nonzero weight of a saved model once, with the weight --readable_model shows and
// the name --invert_hash gives its slot.
TEST(Audit, AuditRegressorNamesEveryNonzeroWeightOnce) {
  const std::string d = scratch_dir("audit_regressor");
  const std::string in = kData + "/vw/text/sms20.vw";
  ASSERT_EQ(run_in(d, "-d " + in +
                          " --learner sgd --loss_function logistic -q ww -f m --invert_hash ih.txt "
                          "--readable_model rm.txt "
                          "--quiet"),
            0);
  ASSERT_EQ(run_in(d, "-d " + in + " -t -i m --audit_regressor ar.txt 2> err"), 0) << read_file(d + "/err");
  std::map<std::string, std::string> weight_of, name_of;  // slot -> weight, slot -> name
  for (const auto& l : slot_lines(read_file(d + "/ih.txt"))) {
    const size_t b = l.rfind(':'), a = l.rfind(':', b - 1);
    name_of[l.substr(a + 1, b - a - 1)] = l.substr(0, a);
  }
  for (const auto& l : slot_lines(read_file(d + "/rm.txt"))) {
    const size_t c = l.find(':');
    const std::string w = l.substr(c + 1, l.find(' ') - c - 1);
    if (std::stod(w) != 0.0) weight_of[l.substr(0, c)] = w;
  }
  std::set<std::string> seen;
  for (const auto& l : lines_of(read_file(d + "/ar.txt"))) {
    const size_t b = l.rfind(':'), a = l.rfind(':', b - 1);
    const std::string slot = l.substr(a + 1, b - a - 1);
    EXPECT_TRUE(seen.insert(slot).second) << "slot written twice: " << l;
    EXPECT_EQ(l.substr(b + 1), weight_of[slot]) << l;
    EXPECT_EQ(l.substr(0, a), name_of[slot]) << l;
  }
  EXPECT_EQ(seen.size(), weight_of.size());
  const std::string err = read_file(d + "/err");
  EXPECT_TRUE(has(err, "Regressor contains " + std::to_string(weight_of.size()) + " values")) << err;
  EXPECT_TRUE(has(err, "100%")) << err;
}

TEST(Audit, AuditRegressorRefusesWhatItCannotDo) {
  const std::string d = scratch_dir("audit_regressor_bad");
  const std::string in = kData + "/vw/text/sms20.vw";
  EXPECT_EQ(run_in(d, "-d " + in + " --audit_regressor ar.txt 2> err"), 1);
  EXPECT_TRUE(has(read_file(d + "/err"), "give it with -i")) << read_file(d + "/err");
  ASSERT_EQ(run_in(d, "-d " + in + " --learner aioli --loss_function logistic -f a --quiet"), 0);
  EXPECT_EQ(run_in(d, "-d " + in + " -i a --audit_regressor ar.txt 2> err"), 1);
  EXPECT_TRUE(has(read_file(d + "/err"), "weight per slot")) << read_file(d + "/err");
  ASSERT_EQ(run_in(d, "-d " + in + " --learner scinol2 --loss_function logistic -f s --quiet"), 0);
  EXPECT_EQ(run_in(d, "-d " + in + " -i s --audit_regressor ar.txt 2> err"), 1);
  EXPECT_TRUE(has(read_file(d + "/err"), "per-slot statistics")) << read_file(d + "/err");
  ASSERT_EQ(run_in(d, "-d " + in + " -f m --quiet"), 0);
  EXPECT_EQ(run_in(d, "-d " + in + " -i m --passes 2 -c --audit_regressor ar.txt 2> err"), 1);
  EXPECT_TRUE(has(read_file(d + "/err"), "once")) << read_file(d + "/err");
}

// --oaa over sgd: VW's readable model byte for byte, its slots laid out as VW's (classes at index + i, each
// feature's K slots rounded up to a power of two).
TEST(AuditShared, OaaReadableModelIsVws) {
  if (!exists(kShared + "/README.md")) GTEST_SKIP() << "no " << kShared;
  const std::string d = scratch_dir("oaa_readable");
  ASSERT_EQ(
      run_in(d, "-d " + kShared + "/inputs/mnist3k.vw.gz --oaa 10 --sgd -l 0.5 --readable_model r 2> e"), 0);
  EXPECT_EQ(read_file(d + "/r"), read_file(kShared + "/multiclass/08_oaa_sgd_model.readable"));
}

// ---- with ../shared: the text oracles on the whole SMS set ----
TEST(AuditShared, InvertHashAndAuditRegressorOnSms) {
  if (!exists(kShared + "/README.md")) GTEST_SKIP() << "no " << kShared;
  const std::string d = scratch_dir("audit_shared");
  const std::string s = "-d " + kShared + "/inputs/sms.vw.gz --loss_function logistic --sgd -l 0.5";
  ASSERT_EQ(run_in(d, s + " --invert_hash ih06.txt -f m 2> /dev/null"),
            0);  // the table's figures are in the file
  EXPECT_EQ(read_file(d + "/ih06.txt"), read_file(kShared + "/text/06_invert_hash.txt"));
  ASSERT_EQ(run_in(d, "-d " + kShared + "/inputs/sms.vw.gz -t -i m --audit_regressor ar.txt --quiet"), 0);
  EXPECT_EQ(read_file(d + "/ar.txt"), read_file(kShared + "/text/09_audit_regressor.txt"));
  ASSERT_EQ(run_in(d, "-d " + kShared +
                          "/inputs/sms20.vw --loss_function logistic --sgd -l 0.5 -q ww "
                          "--invert_hash ih07.txt 2> /dev/null"),
            0);
  EXPECT_EQ(read_file(d + "/ih07.txt"), read_file(kShared + "/text/07_invert_hash_q.txt"));
  for (const std::string f : {"audit_b10", "audit_hash_all"}) {
    const std::string args = f == "audit_b10" ? "-b 10 -q ff -q xy --cubic xyz" : "-b 18 --hash all -q ff";
    EXPECT_EQ(
        stdout_of(d, "-d " + kShared + "/hashes/crafted.vw --learner sgd " + args + " -t --audit --quiet"),
        read_file(kShared + "/hashes/" + f + ".stdout"))
        << f;
  }
}

}  // namespace
}  // namespace lepus::e2e
