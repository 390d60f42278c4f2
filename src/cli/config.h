// The command line, turned into checked configuration. The only code that sees Boost.Program_options.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "dist/collective.h"
#include "io/model_file.h"
#include "learners/multiclass.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "pipeline/driver.h"
#include "serve/server.h"

namespace lepus::cli {

struct Config {
  bool show_help = false;      // --help: text is in help_text
  bool show_version = false;   // --version
  bool list_learners = false;  // --learner help
  std::string help_text;
  bool quiet = false;
  int bits = 18;
  std::string learner = "sgd";
  OptionValues learner_options;
  LossOptions loss;
  std::unique_ptr<Loss> loss_object;  // made from `loss` by main (learners keep a reference to it)
  FeatureSpaceOptions space;
  DriverOptions driver;

  std::string final_regressor;      // -f
  std::string initial_regressor;    // -i
  std::string readable_model;       // --readable_model
  bool readable_full = false;       // --readable_full: lepus's layout for --readable_model, --invert_hash
  std::string metrics_json;         // --metrics_json
  std::string invert_hash;          // --invert_hash: the readable model with feature names
  bool predict_only_model = false;  // save only what prediction needs
  bool save_per_pass = false;       // also save FILE.PASS after each pass
  uint64_t random_seed = 0;         // --random_seed
  std::optional<MulticlassOptions> multiclass;  // --oaa / --csoaa: the learner is the base of this reduction
  bool distributed = false;                     // --distributed: one rank of an MPI job (dist/collective.h)
  SyncTimeout sync_timeout;  // --sync_timeout: when a rank the others wait for in a sync is stuck (auto)
  // --daemon: serve predictions over TCP (serve/server.h) instead of reading data.
  bool daemon = false;
  ServeOptions serve;
  std::string pid_file;     // --pid_file
  std::string port_file;    // --port_file: the port listened on (with --port 0, the one picked)
  bool foreground = false;  // --foreground: stay attached (else the daemon detaches once it listens, as VW)
  std::optional<ModelFile> model;          // the -i model, verified
  std::vector<SavedOption> saved_options;  // what -f records: the options in force
  std::vector<std::string> warnings;       // e.g. a loss given with -i overriding the model's
};

// Throws ConfigError with a one-line message for anything wrong on the command line, and ModelFormatError /
// IoError for an unusable -i model.
Config parse_command_line(int argc, const char* const argv[]);

}  // namespace lepus::cli
