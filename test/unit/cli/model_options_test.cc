// A model is data, not a command line: a model file with a valid checksum restores only the options that shape
// features, loss and learner, each within its range; anything else is refused naming the option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/config.h"
#include "io/model_file.h"
#include "lepus/errors.h"

namespace lepus::cli {
namespace {

class ModelOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lepus_model_options_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A model file holding `options` (and an empty state); returns its path.
  std::string model(const std::vector<SavedOption>& options) {
    const std::string path = (dir_ / "m.bin").string();
    const auto bytes = model_bytes(options, {});
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  // The error parsing `lepus -i MODEL EXTRA...` throws ("" when none).
  std::string error_with(const std::vector<SavedOption>& options, std::vector<std::string> extra = {}) {
    const std::string path = model(options);
    std::vector<std::string> args = {"lepus", "-i", path, "--no_stdin"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    try {
      parse_command_line(static_cast<int>(argv.size()), argv.data());
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

const std::vector<SavedOption> kPlain = {
    {"bit_precision", "18", false}, {"learner", "sgd", false}, {"loss_function", "logistic", true}};

std::vector<SavedOption> plus(std::vector<SavedOption> base, SavedOption extra) {
  base.push_back(std::move(extra));
  return base;
}

TEST_F(ModelOptions, ShapingOptionsAreRestored) {
  EXPECT_EQ(error_with(kPlain), "");
  EXPECT_EQ(error_with(plus(kPlain, {"quadratic", "ff", true})), "");
  EXPECT_EQ(error_with(plus(kPlain, {"learning_rate", "0.25", true})), "");
}

TEST_F(ModelOptions, OutputsPassesCountsAndCachesAreRefused) {
  const std::string target = (dir_ / "victim.txt").string();
  for (const SavedOption& o : std::vector<SavedOption>{{"predictions", target, true},
                                                       {"raw_predictions", target, true},
                                                       {"final_regressor", target, true},
                                                       {"readable_model", target, true},
                                                       {"cache_file", target, true},
                                                       {"passes", "1000000000", true},
                                                       {"examples", "3", true},
                                                       {"testonly", "", true},
                                                       {"data", target, true},
                                                       {"no_such_option", "1", true}}) {
    const std::string err = error_with(plus(kPlain, o));
    EXPECT_NE(err.find("--" + o.name + " is not one a model may set"), std::string::npos)
        << o.name << ": " << err;
  }
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(ModelOptions, ValuesOutOfRangeAreRefused) {
  for (const SavedOption& o : std::vector<SavedOption>{{"bit_precision", "99", true},
                                                       {"bit_precision", "x", true},
                                                       {"hash", "md5", true},
                                                       {"link", "cube", true},
                                                       {"loss_function", "nope", true},
                                                       {"noconstant", "yes", true},
                                                       {"sgd", "1", true},
                                                       {"learning_rate", "nan", true},
                                                       {"learning_rate", "1e999", true},
                                                       {"random_seed", "-", true},
                                                       {"hash_seed", "4294967296", true},
                                                       {"oaa", "0", true},
                                                       {"indexing", "2", true}}) {
    std::vector<SavedOption> opts;
    for (const auto& p : kPlain)
      if (p.name != o.name) opts.push_back(p);
    opts.push_back(o);
    const std::string err = error_with(opts);
    EXPECT_NE(err.find("its option --" + o.name), std::string::npos)
        << o.name << "=" << o.value << ": " << err;
  }
  EXPECT_NE(error_with({{"learner", "no-such-learner", true}}).find("not one this lepus has"),
            std::string::npos);
  // Another learner's option in an sgd model.
  EXPECT_NE(error_with(plus(kPlain, {"ftprl_radius", "2", true})).find("--ftprl_radius is not one"),
            std::string::npos);
}

// Update-mode switches that contradict the model are errors naming both, never silently ignored.
TEST_F(ModelOptions, UpdateModesMustAgreeWithTheModel) {
  EXPECT_NE(error_with(kPlain, {"--sgd"}).find("--sgd conflicts with the model's no --sgd"),
            std::string::npos);
  const auto sgd_model = plus(kPlain, {"sgd", "", true});
  EXPECT_NE(error_with(sgd_model, {"--adaptive"}).find("--adaptive conflicts"), std::string::npos);
  EXPECT_EQ(error_with(sgd_model, {"--sgd"}), "");
  EXPECT_EQ(error_with(sgd_model), "");
}

}  // namespace
}  // namespace lepus::cli
