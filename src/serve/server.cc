#include "serve/server.h"

#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include <array>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>
#include <vector>

#include "formats/vw_text.h"
#include "lepus/errors.h"
#include "lepus/model_io.h"
#include "pipeline/progress.h"

namespace lepus {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

class FirstWarning final : public WarningSink {
 public:
  void warn(const std::string& message) override {
    if (first.empty()) first = message;
  }
  std::string first;
};

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// A connection as the server sees it on SIGTERM: asked to finish what it is answering, then close.
class Drainable {
 public:
  virtual ~Drainable() = default;
  virtual void drain() = 0;
};

}  // namespace

struct Server::Impl {
  Impl(Server& owner, const ServeOptions& o, Loader l, Saver s, Log g)
      : server(owner),
        opt(o),
        load(std::move(l)),
        save(std::move(s)),
        log(std::move(g)),
        acceptor(io),
        signals(io, SIGHUP, SIGTERM, SIGINT) {}

  std::shared_ptr<ServedModel> model() {
    std::lock_guard<std::mutex> lock(model_mutex);
    return current;
  }

  void accept();
  void wait_signal();
  // SIGTERM, SIGINT: no new connection; each one finishes the lines it has read and delivers their answers, then
  // closes (a wait for the next line is cancelled); once all are closed (or after kDrainSeconds), the model is saved
  // to -f, so it holds every line answered, and the loop stops.
  void shut_down();
  void finish_when_drained(std::chrono::steady_clock::time_point deadline);
  static constexpr int kDrainSeconds = 5;
  std::string save_to(const std::string& path);

  Server& server;
  ServeOptions opt;
  Loader load;
  Saver save;
  Log log;
  // Before io: destroying io destroys the connections still waiting, which count themselves out of this.
  std::atomic<size_t> connections{0};
  std::mutex open_mutex;
  std::vector<std::weak_ptr<Drainable>>
      open;                // the connections, for shut_down() (expired ones pruned on accept)
  bool stopping = false;   // under open_mutex
  std::mutex model_mutex;  // guards `current` (the pointer, not the model)
  std::shared_ptr<ServedModel> current;
  asio::io_context io;
  tcp::acceptor acceptor;
  asio::signal_set signals;
};

namespace {

// One client: read what it sent, answer every whole line, write the answers, read again. All of a connection's
// handlers run on its strand; a timer closes it after opt.idle_seconds without progress either way.
class Connection : public Drainable, public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::Impl& server, tcp::socket socket)
      : s_(server),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        in_(server.opt.max_line_bytes + 1) {
    ++s_.connections;
  }
  ~Connection() { --s_.connections; }

  void start() {
    arm_timer();
    read();
  }

  void drain() override {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      self->draining_ = true;
      if (self->reading_) {
        boost::system::error_code ignored;
        self->socket_.cancel(
            ignored);  // the pending read ends with operation_aborted, and the connection closes
      }
    });
  }

 private:
  void arm_timer() {
    timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s_.opt.idle_seconds)));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec != asio::error::operation_aborted) self->close();  // expired: no progress for too long
    });
  }

  void close() {
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  // Closes once the answers written so far have reached the client: our side ends first (FIN), then whatever the
  // client still sends is read and dropped, for at most a second, before the socket is closed. (Closing with input
  // unread sends a reset, and a reset may make the client's system drop answers it has not read yet.)
  void linger_close() {
    if (lingering_) return;
    lingering_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec != asio::error::operation_aborted) self->close();
    });
    discard();
  }
  void discard() {
    socket_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                              if (ec) {
                                self->close();
                              } else {
                                self->discard();
                              }
                            });
  }

  void read() {
    if (draining_) {
      linger_close();
      return;
    }
    reading_ = true;
    asio::async_read_until(
        socket_, in_, '\n',
        [self = shared_from_this()](const boost::system::error_code& ec, size_t n) { self->on_read(ec, n); });
  }

  void on_read(const boost::system::error_code& ec, size_t) {
    reading_ = false;
    if (ec == asio::error::not_found) {  // the buffer filled without a newline: too long a line
      write("error: line longer than --max_line_bytes " + std::to_string(s_.opt.max_line_bytes) + "\n", true);
      return;
    }
    if (ec) {
      if (draining_ && ec == asio::error::operation_aborted) {
        linger_close();  // the server is stopping: the read was cancelled
      } else {
        close();  // end of stream, reset, or closed by the timer
      }
      return;
    }
    arm_timer();
    std::string out;
    const char* data = static_cast<const char*>(in_.data().data());
    const size_t size = in_.size();
    size_t begin = 0;
    for (size_t nl;
         (nl = std::string_view(data + begin, size - begin).find('\n')) != std::string_view::npos;) {
      answer(std::string_view(data + begin, nl), out);
      begin += nl + 1;
    }
    in_.consume(begin);
    if (out.empty()) {
      read();
    } else {
      write(std::move(out), false);
    }
  }

  void write(std::string text, bool then_close) {
    auto buffer = std::make_shared<std::string>(std::move(text));
    asio::async_write(
        socket_, asio::buffer(*buffer),
        [self = shared_from_this(), buffer, then_close](const boost::system::error_code& ec, size_t) {
          if (ec) {
            self->close();
            return;
          }
          if (then_close) {
            self->linger_close();
            return;
          }
          self->arm_timer();
          self->read();
        });
  }

  // One line's answer (nothing for an empty line, as VW).
  void answer(std::string_view line, std::string& out) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == "reload") {
      const std::string why = s_.server.reload();
      out += why.empty() ? "reloaded\n" : "error: reload failed: " + one_line(why) + "\n";
      return;
    }
    try {
      Example ex;
      FirstWarning warnings;
      parse_vw_line(line, s_.opt.parse, ex, warnings);
      if (ex.empty) return;
      if (!warnings.first.empty()) {
        out += "error: " + one_line(warnings.first) + "\n";
        return;
      }
      if (ex.tag == "save" || ex.tag.rfind("save_", 0) == 0) {  // VW's save command
        const std::string path = ex.tag == "save" ? s_.opt.save_path : ex.tag.substr(5);
        out += path.empty() ? "error: save needs -f FILE (or a tag save_FILE)\n" : s_.save_to(path) + "\n";
        return;
      }
      out += predict(ex);
    } catch (const std::exception& e) {
      out += "error: " + one_line(e.what()) + "\n";
    }
  }

  std::string predict(Example& ex) {
    const std::shared_ptr<ServedModel> m = s_.model();
    Prediction p;
    std::string klass;
    if (s_.opt.test_only) {
      if (m.get() !=
          space_of_) {  // a new model (or the first line): this connection's copy of its feature space
        space_ = std::make_unique<FeatureSpace>(m->space_options);
        ModelReader r(m->space_state.data(), m->space_state.size(), "served model");
        space_->load(r);
        space_of_ = m.get();
        holder_ = m;
      }
      space_->expand(ex);
      if (predicts_concurrently(*m->learner)) {
        p = m->learner->predict(ex);
      } else {
        std::lock_guard<std::mutex> lock(m->mutex);
        p = m->learner->predict(ex);
        if (const ClassOutcome* o = class_outcome_of(*m->learner)) klass = std::to_string(o->klass);
      }
    } else {
      std::lock_guard<std::mutex> lock(m->mutex);  // a learning daemon learns one line at a time
      m->space->expand(ex);
      p = m->learner->learn(ex);
      if (const ClassOutcome* o = class_outcome_of(*m->learner)) klass = std::to_string(o->klass);
    }
    std::string text;
    if (!klass.empty()) {
      text = klass;
    } else {
      uint64_t replaced = 0;  // the daemon keeps no summary to count them in
      text = format_prediction(shown_prediction(s_.opt.link, s_.opt.binary, p.value, replaced));
    }
    if (!ex.tag.empty()) text += " " + ex.tag;
    text += "\n";
    if (s_.opt.watch) {
      uint64_t replaced = 0;
      std::string raw = format_prediction(finite_or_replaced(p.raw, replaced));
      if (!ex.tag.empty()) raw += " " + ex.tag;
      s_.opt.watch(text, raw + "\n");
    }
    return text;
  }

  Server::Impl& s_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf in_;
  std::unique_ptr<FeatureSpace> space_;  // -t: this connection's feature space, for the model space_of_
  const ServedModel* space_of_ = nullptr;
  std::shared_ptr<ServedModel> holder_;  // keeps space_of_ alive while space_ refers to it
  bool reading_ = false;                 // a read is pending (on the strand)
  bool lingering_ = false;               // linger_close() has begun
  std::array<char, 4096> scratch_;       // linger_close(): what the client still sends, dropped
  bool draining_ = false;  // the server is stopping: close once the answers being written are delivered
};

}  // namespace

void Server::Impl::accept() {
  acceptor.async_accept(
      asio::make_strand(io), [this](const boost::system::error_code& ec, tcp::socket socket) {
        if (!acceptor.is_open()) return;
        if (!ec) {
          if (connections.load() >= opt.max_connections) {
            // Refused with a reason, without blocking the acceptor: the line is written and the socket closed.
            auto s = std::make_shared<tcp::socket>(std::move(socket));
            auto text = std::make_shared<std::string>("error: too many connections (--max_connections " +
                                                      std::to_string(opt.max_connections) + ")\n");
            asio::async_write(*s, asio::buffer(*text), [s, text](const boost::system::error_code&, size_t) {
              boost::system::error_code ignored;
              s->close(ignored);
            });
          } else {
            // Answers go out as soon as they are written: without it, the answers to a batch of lines after the first
            // packet waited ~40 ms for the client's delayed ack (Nagle's algorithm).
            boost::system::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            auto c = std::make_shared<Connection>(*this, std::move(socket));
            {
              std::lock_guard<std::mutex> lock(open_mutex);
              std::erase_if(open, [](const std::weak_ptr<Drainable>& w) { return w.expired(); });
              open.push_back(c);
              if (stopping) c->drain();
            }
            c->start();
          }
        }
        accept();
      });
}

void Server::Impl::wait_signal() {
  signals.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      const std::string why = server.reload();
      log(why.empty() ? "SIGHUP: model reloaded" : "SIGHUP: reload failed, the model in use stays: " + why);
      wait_signal();
      return;
    }
    shut_down();
  });
}

void Server::Impl::shut_down() {
  boost::system::error_code ignored;
  acceptor.close(ignored);
  std::vector<std::shared_ptr<Drainable>> live;
  {
    std::lock_guard<std::mutex> lock(open_mutex);
    stopping = true;
    for (const auto& w : open)
      if (auto c = w.lock()) live.push_back(std::move(c));
  }
  for (const auto& c : live) c->drain();
  live.clear();
  finish_when_drained(std::chrono::steady_clock::now() + std::chrono::seconds(kDrainSeconds));
}

void Server::Impl::finish_when_drained(std::chrono::steady_clock::time_point deadline) {
  if (connections.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    auto t = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(10));
    t->async_wait([this, t, deadline](const boost::system::error_code&) { finish_when_drained(deadline); });
    return;
  }
  if (connections.load() > 0)
    log("stopping with " + std::to_string(connections.load()) + " connections still open");
  if (!opt.save_path.empty()) log(save_to(opt.save_path));
  server.stop();
}

std::string Server::Impl::save_to(const std::string& path) {
  const std::shared_ptr<ServedModel> m = model();
  try {
    std::lock_guard<std::mutex> lock(m->mutex);
    save(path, *m);
    return "saved " + path;
  } catch (const std::exception& e) {
    return "error: save failed: " + one_line(e.what());
  }
}

Server::Server(const ServeOptions& options, Loader load, Saver save, Log log)
    : impl_(std::make_unique<Impl>(*this, options, std::move(load), std::move(save), std::move(log))) {
  impl_->current = impl_->load();
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options.listen, ec);
  if (ec) throw ConfigError("--listen " + options.listen + ": not an IP address");
  const tcp::endpoint endpoint(address, options.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw IoError("--daemon: cannot listen on " + options.listen + ":" + std::to_string(options.port) + ": " +
                  ec.message());
}

Server::~Server() = default;

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::run() {
  impl_->accept();
  impl_->wait_signal();
  const int n = impl_->opt.threads > 0 ? impl_->opt.threads
                                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int i = 1; i < n; ++i) pool.emplace_back([this] { impl_->io.run(); });
  impl_->io.run();
  for (auto& t : pool) t.join();
}

void Server::stop() {
  asio::post(impl_->io, [this] {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->signals.cancel(ignored);
    impl_->io.stop();
  });
}

void Server::after_fork() { impl_->io.notify_fork(asio::execution_context::fork_child); }

std::string Server::reload() {
  try {
    std::shared_ptr<ServedModel> fresh = impl_->load();
    {
      std::lock_guard<std::mutex> lock(impl_->model_mutex);
      impl_->current = std::move(fresh);
    }
    ++reloads_;
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace lepus
