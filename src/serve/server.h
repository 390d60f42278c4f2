// --daemon: VW's prediction server. Clients connect over TCP and write example lines; each line's prediction comes
// back on its own line (with the tag, as -p writes it), in order per connection, many connections at once.
//
// Built on Boost.Asio: a pool of threads runs one io_context; each connection reads, answers and reads again, so a
// client that does not read its answers holds only its own connection (back-pressure), and every wait has a timer.
// Predict-only serving (-t) answers connections in parallel against one shared read-only model (learners whose
// predict() keeps scratch state are called one at a time); a learning daemon learns the lines in the order they
// are taken, one at a time. The model is a snapshot behind a shared pointer: reload() swaps in a new one while
// lines already being answered finish on the old.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/feature_space.h"
#include "core/link.h"
#include "formats/format.h"
#include "lepus/learner.h"
#include "lepus/loss.h"

namespace lepus {

struct ServeOptions {
  std::string listen = "127.0.0.1";  // --listen: loopback unless asked (VW listens on every interface)
  uint16_t port = 26542;             // --port (0: any free port; Server::port() tells which)
  int threads = 0;                   // --num_children: threads answering connections (0: the cores)
  size_t max_line_bytes =
      size_t{1} << 20;           // a longer line is answered with an error and the connection closed
  size_t max_connections = 256;  // --max_connections: more are answered with an error and closed
  double idle_seconds =
      60.0;                // --idle_timeout: a connection that neither sends nor reads this long is closed
  bool test_only = false;  // -t: predict only
  ParseOptions parse;
  Link link = Link::kIdentity;
  bool binary = false;
  std::string save_path;  // -f: where a `save` line and SIGTERM write the model ("" : not saved)
  // -p / -r: called with each answered example's prediction line (as its client gets it) and its raw score line
  // (-r's "score tag"), from any connection's thread; the callee serialises. Unset: nobody watches.
  std::function<void(const std::string& prediction, const std::string& raw)> watch;
};

// The model being served: its learner and its feature space (whose state a connection copies).
struct ServedModel {
  std::unique_ptr<Loss> loss;  // the learner's loss (it keeps a reference): destroyed last
  std::unique_ptr<Learner> learner;
  std::unique_ptr<FeatureSpace> space;
  FeatureSpaceOptions space_options;
  std::vector<uint8_t> space_state;  // space->save()'s bytes
  std::mutex mutex;  // serialises predict() for learners that keep scratch state, and learning
};

class Server {
 public:
  using Loader = std::function<std::shared_ptr<ServedModel>()>;  // builds the model from its file (reload)
  using Saver = std::function<void(const std::string&, ServedModel&)>;  // writes it atomically
  using Log = std::function<void(const std::string&)>;                  // one line for stderr
  // Binds the listening socket (IoError when it cannot) and loads the model.
  Server(const ServeOptions& options, Loader load, Saver save, Log log);
  ~Server();
  uint16_t port() const;
  // Answers connections until stop(), SIGTERM or SIGINT (then saves to -f if given); SIGHUP reloads the model.
  void run();
  void stop();
  // In the child after fork() (the daemon detaching): the event loop's kernel state is renewed.
  void after_fork();
  // Builds the model again from its file and swaps it in; on failure keeps the old one and returns the reason.
  std::string reload();
  uint64_t reloads() const { return reloads_; }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> reloads_{0};
};

}  // namespace lepus
