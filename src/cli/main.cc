// lepus: catches every typed error, prints one line, exits 1. Nothing below src/cli prints or exits.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include "cli/config.h"
#include "cli/readable_model.h"
#include "cli/session.h"
#include "dist/collective.h"
#include "io/model_file.h"
#include "io/output_check.h"
#include "io/safe_files.h"
#include "lepus/errors.h"
#include "pipeline/driver.h"
#include "serve/server.h"

namespace {

using namespace lepus;

// What a signal's handler says before the run ends (set while a run's passes are saved beside the model).
std::atomic<const char*> g_interrupt_note{nullptr};

using cli::build;
using cli::Built;

// --daemon: serves until SIGTERM or SIGINT. The model is built again from the same command line (re-reading
// the -i file) on SIGHUP or a `reload` line.
int serve(cli::Config& c, int argc, const char* const argv[]) {
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-answer is that connection's error, not the server's end
  auto load = [argc, argv]() {
    cli::Config fresh = cli::parse_command_line(argc, argv);
    fresh.loss_object = make_loss(fresh.loss);
    Built b = build(fresh);
    auto m = std::make_shared<ServedModel>();
    ModelWriter w;
    b.space->save(w);
    m->space_state = w.bytes();
    m->space_options = fresh.space;
    m->learner = std::move(b.learner);
    m->space = std::move(b.space);
    m->loss = std::move(fresh.loss_object);
    return m;
  };
  auto save = [&c](const std::string& path, ServedModel& m) {
    save_model(path, c.saved_options, *m.space, *m.learner, c.predict_only_model);
  };
  std::ostream* log = c.quiet ? nullptr : &std::cerr;
  // -p / -r: every answered example, as VW's daemon writes them (e.g. -r /dev/stdout to watch a server).
  struct Watched {
    std::mutex mutex;
    std::unique_ptr<std::ofstream> files[2];
    std::ostream* out[2] = {nullptr, nullptr};
  };
  auto watched = std::make_shared<Watched>();
  const std::string* paths[2] = {&c.driver.predictions, &c.driver.raw_predictions};
  for (int k = 0; k < 2; ++k) {
    const std::string& path = *paths[k];
    if (path.empty()) continue;
    if (path == "/dev/stdout" || path == "-") {
      watched->out[k] = &std::cout;
    } else {
      watched->files[k] = std::make_unique<std::ofstream>(path);
      if (!*watched->files[k]) throw IoError(path + ": cannot open for writing");
      watched->out[k] = watched->files[k].get();
    }
  }
  if (watched->out[0] || watched->out[1])
    c.serve.watch = [watched](const std::string& prediction, const std::string& raw) {
      std::lock_guard<std::mutex> lock(watched->mutex);
      if (watched->out[0])
        watched->out[0]->write(prediction.data(), static_cast<std::streamsize>(prediction.size())).flush();
      if (watched->out[1])
        watched->out[1]->write(raw.data(), static_cast<std::streamsize>(raw.size())).flush();
    };
  Server server(c.serve, load, save, [log](const std::string& line) {
    if (log) *log << line << std::endl;
  });
  if (!c.port_file.empty()) {
    std::ofstream out(c.port_file);
    out << server.port() << "\n";
    if (!out.flush()) throw IoError(c.port_file + ": cannot write the port");
  }
  if (!c.foreground) {  // as VW: detach once listening, so a client may connect as soon as the command
                        // returns
    const pid_t pid = ::fork();
    if (pid < 0) throw IoError(std::string("--daemon: fork failed: ") + std::strerror(errno));
    if (pid > 0) return 0;
    ::setsid();
    server.after_fork();
  }
  if (!c.pid_file.empty()) {
    std::ofstream out(c.pid_file);
    out << ::getpid() << "\n";
    if (!out.flush()) throw IoError(c.pid_file + ": cannot write the process id");
  }
  if (log)
    *log << "lepus daemon listening on " << c.serve.listen << ":" << server.port() << " ("
         << (c.serve.test_only ? "predicting" : "learning") << ")" << std::endl;
  server.run();
  return 0;
}

// --distributed: this process's MPI job, for the error path in main() (a failing rank ends every rank).
std::unique_ptr<Collective> g_ranks;

// --distributed: joins the job; each data name's {rank} becomes this rank's number (else the ranks share the
// blocks of one stream), and so does that of -p, -r and --cache_file; only rank 0 prints and writes -f and
// --readable_model.
void join_ranks(cli::Config& c) {
  g_ranks = join_mpi(nullptr, nullptr, c.sync_timeout);
  const std::string rank = std::to_string(g_ranks->rank());
  auto substitute = [&](std::string& name) {
    bool found = false;
    for (size_t at; (at = name.find("{rank}")) != std::string::npos; found = true) name.replace(at, 6, rank);
    return found;
  };
  bool own_files = false;
  for (auto& d : c.driver.data) own_files |= substitute(d);
  // Per-rank outputs (the command line allows them only with {rank} in their names).
  for (std::string* name : {&c.driver.predictions, &c.driver.raw_predictions, &c.driver.cache_file})
    substitute(*name);
  c.driver.ranks = g_ranks.get();
  c.driver.stripe_blocks = !own_files;
  if (g_ranks->rank() != 0) {
    c.quiet = true;
    c.final_regressor.clear();
    c.readable_model.clear();
  }
}

int run(int argc, const char* const argv[]) {
  cli::Config c = cli::parse_command_line(argc, argv);
  if (c.distributed) join_ranks(c);
  if (c.show_help) {
    std::cout << c.help_text;
    return 0;
  }
  if (c.show_version) {
    std::cout << "lepus " << LEPUS_VERSION << "\n";
    return 0;
  }
  if (c.list_learners) {
    for (const auto& row : learner_registry()) std::cout << row.name << "\t" << row.help << "\n";
    return 0;
  }
  // Every output path is checked before any example is read (-p, -r and the cache are opened by the driver).
  if (!c.final_regressor.empty()) check_writable(c.final_regressor, "-f");
  if (!c.readable_model.empty()) check_writable(c.readable_model, "--readable_model");
  if (!c.invert_hash.empty()) check_writable(c.invert_hash, "--invert_hash");
  std::ostream* log = c.quiet ? nullptr : &std::cerr;
  if (log)
    for (const auto& w : c.warnings) *log << w << "\n";
  if (c.daemon) return serve(c, argc, argv);
  c.loss_object = make_loss(c.loss);
  const Loss* loss = c.loss_object.get();
  Built built = build(c);
  std::unique_ptr<Learner>& learner = built.learner;
  FeatureSpace& space = *built.space;
  Driver driver(c.driver, *learner, space, *loss, log);  // opens every file before anything is printed

  if (log) {
    std::ostringstream pre;
    for (const auto& l : space.describe()) pre << l << "\n";
    const auto learner_lines = learner->describe();
    for (const auto& l : learner_lines)
      if (l.rfind("using ", 0) == 0) pre << l << "\n";
    if (c.driver.test_only) pre << "only testing\n";
    if (!c.final_regressor.empty()) pre << "final_regressor = " << c.final_regressor << "\n";
    if (!c.driver.predictions.empty()) pre << "predictions = " << c.driver.predictions << "\n";
    if (!c.driver.raw_predictions.empty()) pre << "raw predictions = " << c.driver.raw_predictions << "\n";
    pre << driver.cache_status() << "\n";
    pre << "Reading datafile = ";
    if (c.driver.data.empty()) pre << (c.driver.no_input ? "none (--no_stdin)" : "stdin");
    for (size_t i = 0; i < c.driver.data.size(); ++i) pre << (i ? " " : "") << c.driver.data[i];
    pre << "\n";
    pre << "num sources = " << std::max<size_t>(1, c.driver.data.size()) << "\n";
    if (g_ranks) {
      pre << "distributed: " << g_ranks->size() << " ranks, "
          << (c.driver.stripe_blocks ? "sharing the blocks of the data"
                                     : "each its own data files (rank 0's shown)")
          << ", models combined at the end of each pass";
      if (c.driver.sync_every > 0) pre << " and every " << c.driver.sync_every << " examples a rank reads";
      pre << "\nmerge = " << find_learner(c.learner)->traits.merge << "\n";
    }
    pre << "Num weight bits = " << c.bits << "\n";
    for (const auto& l : learner_lines)
      if (l.rfind("using ", 0) != 0) pre << l << "\n";
    if (c.driver.passes > 1 && c.learner_options.has("decay_learning_rate"))
      pre << "decay_learning_rate = " << c.learner_options.text("decay_learning_rate") << "\n";
    pre << "learner = " << learner->name() << "\n";
    pre << "loss function = " << loss->name() << "\n";
    if (c.driver.link != Link::kIdentity) pre << "link = " << link_name(c.driver.link) << "\n";
    if (c.driver.binary) pre << "binary predictions\n";
    std::cerr << pre.str();
  }

  auto save_to = [&](const std::string& path) {
    save_model(path, c.saved_options, space, *learner, c.predict_only_model);
  };
  std::function<void()> save;
  std::function<void(int)> save_pass;
  // Passes with a holdout save each better pass: into a file beside the model, moved over -f only when the
  // run ends, so an interrupted run leaves the previous model as it was (a signal removes the side file and
  // says so).
  std::string side;
  struct SideFile {
    std::string& path;
    ~SideFile() {
      if (path.empty()) return;
      ::unlink(path.c_str());
      unregister_temp_file(path);
      g_interrupt_note = nullptr;
    }
  } side_guard{side};
  if (!c.final_regressor.empty()) {
    struct stat st;
    const std::string target = replaced_target(c.final_regressor);
    const bool regular = ::stat(target.c_str(), &st) != 0 || S_ISREG(st.st_mode);
    if (c.driver.passes > 1 && !c.driver.holdout_off && regular) {
      side = temp_name_for(target);
      register_temp_file(side);
      g_interrupt_note =
          "lepus: interrupted: the model file (-f) is left as it was; this run's passes were not "
          "saved\n";
      save = [&]() { save_to(side); };
    } else {
      save = [&]() { save_to(c.final_regressor); };
    }
  }
  if (c.save_per_pass) save_pass = [&](int pass) { save_to(c.final_regressor + "." + std::to_string(pass)); };
  const RunStats stats = driver.run(save, save_pass);
  if (!side.empty()) {
    struct stat st;
    if (::stat(side.c_str(), &st) == 0) move_into_place(side, c.final_regressor);
    unregister_temp_file(side);
    g_interrupt_note = nullptr;
    side.clear();
  }
  if (log) std::cerr << driver.summary(stats);
  if (!c.metrics_json.empty()) {
    std::ofstream out(c.metrics_json);
    out << driver.metrics_json();
    out.close();
    if (!out) throw IoError(c.metrics_json + ": cannot write the metrics");
  }
  VwRunFigures figures = driver.vw_figures(stats);
  figures.save_resume = !c.predict_only_model;
  if (!c.readable_model.empty()) cli::write_readable_model(c.readable_model, c, *learner, figures);
  if (!c.invert_hash.empty())
    cli::write_readable_model(c.invert_hash, c, *learner, figures, &driver.auditor()->slot_names());
  return 0;
}

}  // namespace

// SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporary model and cache files being written (the files
// they would replace stay as they were), then end the run as the signal would.
extern "C" void on_fatal_signal(int sig) {
  lepus::remove_temp_files();
  if (const char* note = g_interrupt_note.load(); note != nullptr && sig != SIGPIPE) {
    size_t n = 0;
    while (note[n] != '\0') ++n;
    (void)!::write(2, note, n);  // async-signal-safe
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN)
      continue;  // ignored by whoever started us (nohup, a background job): stays so
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
  // --distributed: an error names its rank and ends every rank of the job (none is left waiting in a sum).
  auto who = [] { return g_ranks ? "rank " + std::to_string(g_ranks->rank()) + ": " : std::string(); };
  auto fail = [] {
    if (g_ranks && g_ranks->size() > 1) g_ranks->abort(1);
    g_ranks.reset();
    return 1;
  };
  try {
    const int rc = run(argc, argv);
    g_ranks.reset();  // MPI_Finalize, before static destruction
    return rc;
  } catch (const lepus::Error& e) {
    std::cout.flush();
    std::cerr << "lepus: error: " + who() + e.what() + "\n";  // one write: ranks share stderr
  } catch (const std::bad_alloc&) {
    std::cerr << "lepus: error: " + who() + "out of memory (try a smaller -b)\n";
  } catch (const std::exception& e) {
    std::cerr << "lepus: error: " + who() + e.what() + "\n";
  }
  return fail();
}
