// --daemon over loopback: answers equal -p's, concurrent clients, a learning daemon, reloads under load, VW's wiki
// example, and hostile clients that must not hurt the others. Every daemon started here is stopped by the test
// (SIGTERM, then SIGKILL), and each wait is bounded.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kRcv1 = std::string(LEPUS_TEST_DATA) + "/vw/inputs/rcv1_small.vw.gz";
using Clock = std::chrono::steady_clock;

// A daemon started in dir with --foreground --port 0 (unless args name a port); stopped when destroyed.
class Daemon {
 public:
  // daemon_flag false: started as VW users often do, by --port and --pid_file alone (VW's rule: either implies
  // --daemon).
  Daemon(const std::string& dir, const std::string& args, bool foreground = true, bool daemon_flag = true)
      : dir_(dir) {
    const std::string cmd = std::string(daemon_flag ? "--daemon " : "") + "--pid_file pid --port_file port " +
                            std::string(foreground ? "--foreground " : "") +
                            (args.find("--port ") == std::string::npos ? "--port 0 " : "") + args +
                            " 2> daemon.err";
    ::unlink((dir + "/pid").c_str());
    ::unlink((dir + "/port").c_str());
    rc_ = run_in(dir, foreground ? cmd + " &" : cmd);  // detached: the command itself returns once it listens
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline && (read_number("pid") <= 0 || read_number("port") <= 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pid_ = static_cast<pid_t>(read_number("pid"));
    port_ = static_cast<int>(read_number("port"));
  }
  ~Daemon() { stop(); }
  bool up() const { return pid_ > 0 && port_ > 0 && ::kill(pid_, 0) == 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  int launch_status() const { return rc_; }
  std::string err() const { return read_file(dir_ + "/daemon.err"); }
  // SIGTERM, and the process gone within 10 s (else SIGKILL); true when it ended on SIGTERM.
  bool stop() {
    if (pid_ <= 0) return true;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline && alive()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const bool clean = !alive();
    if (!clean) ::kill(pid_, SIGKILL);
    pid_ = -1;
    return clean;
  }

 private:
  // A foreground daemon is the shell's child, reaped by init once the shell is gone; a zombie counts as ended.
  bool alive() const {
    if (::kill(pid_, 0) != 0) return false;
    const std::string stat = read_file("/proc/" + std::to_string(pid_) + "/stat");
    const size_t close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
  }
  long read_number(const std::string& name) const {
    const std::string t = read_file(dir_ + "/" + name);
    return t.empty() || t.back() != '\n' ? 0 : std::strtol(t.c_str(), nullptr, 10);
  }
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = -1;
  int rc_ = -1;
};

// A client socket with bounded waits.
class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  bool send(const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
      const ssize_t n = ::send(fd_, s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until `lines` newlines arrived, the peer closed, or `seconds` passed; returns what was read.
  std::string read_lines(size_t lines, double seconds = 20.0) {
    std::string out;
    size_t count = 0;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    char buf[65536];
    while (count < lines) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      for (ssize_t i = 0; i < n; ++i) count += buf[i] == '\n';
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

// rcv1_small's lines, a model trained on them and -t -p's predictions of them (made once per test).
struct Served {
  std::string dir, lines, ref;
  size_t count = 0;
};
Served make_served(const std::string& name, const std::string& train_args = "--loss_function logistic") {
  Served s;
  s.dir = scratch_dir(name);
  EXPECT_EQ(run_in(s.dir, "-d " + kRcv1 + " " + train_args + " -f m --quiet"), 0);
  EXPECT_EQ(run_in(s.dir, "-t -i m -d " + kRcv1 + " -p ref --quiet"), 0);
  EXPECT_EQ(std::system(("zcat " + kRcv1 + " > " + s.dir + "/lines").c_str()), 0);
  s.lines = read_file(s.dir + "/lines");
  s.ref = read_file(s.dir + "/ref");
  s.count = lines_of(s.lines).size();
  return s;
}

TEST(DaemonCli, PredictOnlyAnswersAsMinusPToConcurrentClients) {
  const Served s = make_served("daemon_t");
  ASSERT_EQ(s.count, 1000u);
  Daemon d(s.dir, "-t -i m --num_children 2");
  ASSERT_TRUE(d.up()) << d.err();
  EXPECT_TRUE(has(d.err(), "listening on 127.0.0.1:" + std::to_string(d.port()))) << d.err();
  std::atomic<int> same{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      Client c(d.port());
      if (!c.ok() || !c.send(s.lines)) return;
      if (c.read_lines(s.count) == s.ref) ++same;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(same.load(), 8);
  // A tag comes back as -p writes it; an empty line gets no answer.
  Client c(d.port());
  ASSERT_TRUE(c.send("\n1 'first| 1:1\n"));
  EXPECT_TRUE(has(c.read_lines(1), " first\n"));
  EXPECT_TRUE(d.stop());
}

// `vw --port N -i model -t` starts VW's daemon: so does lepus (no --daemon), and answers as -p does.
TEST(DaemonCli, PortAloneStartsTheDaemonAsInVw) {
  const Served s = make_served("daemon_port");
  Daemon d(s.dir, "-t -i m --port 0", true, false);
  ASSERT_TRUE(d.up()) << d.err();
  Client c(d.port());
  ASSERT_TRUE(c.ok() && c.send(s.lines));
  EXPECT_EQ(c.read_lines(s.count), s.ref);
  EXPECT_TRUE(d.stop());
  EXPECT_EQ(run_in(s.dir, "--pid_file p2 -d x.vw 2> err"),
            1);  // --pid_file starts a daemon too: no data files
  EXPECT_TRUE(has(read_file(s.dir + "/err"), "not from data files")) << read_file(s.dir + "/err");
}

// VW's way to watch a server: -p and -r with the daemon write each answered example's prediction and raw score
// there too (issue 43 item 12), e.g. -r /dev/stdout on the daemon's own output.
TEST(DaemonCli, PredictionsAndRawScoresOfEveryRequestAreWritten) {
  const Served s = make_served("daemon_watch");
  Daemon d(s.dir, "-t -i m -p preds -r /dev/stdout > raw");
  ASSERT_TRUE(d.up()) << d.err();
  Client c(d.port());
  ASSERT_TRUE(c.ok() && c.send(s.lines));
  ASSERT_EQ(c.read_lines(s.count), s.ref);
  EXPECT_TRUE(d.stop());
  EXPECT_EQ(read_file(s.dir + "/preds"), s.ref);  // -p: what the client was answered
  ASSERT_EQ(run_in(s.dir, "-t -i m -d " + kRcv1 + " -r rawref --quiet"), 0);
  EXPECT_EQ(read_file(s.dir + "/raw"), read_file(s.dir + "/rawref"));  // -r: as a run over the file writes it
}

TEST(DaemonCli, LearningDaemonLearnsInOrderSavesAndSavesOnSigterm) {
  const Served s = make_served("daemon_learn");
  ASSERT_EQ(run_in(s.dir, "-d lines --loss_function logistic -p offline -f offline.model --quiet"), 0);
  Daemon d(s.dir, "--loss_function logistic -f served.model");
  ASSERT_TRUE(d.up()) << d.err();
  Client c(d.port());
  ASSERT_TRUE(c.send(s.lines));
  EXPECT_EQ(c.read_lines(s.count),
            read_file(s.dir + "/offline"));  // one client: the offline run's predictions
  ASSERT_TRUE(c.send("save|\n"));
  EXPECT_EQ(c.read_lines(1), "saved served.model\n");
  ASSERT_EQ(run_in(s.dir, "-t -i served.model -d lines -p a --quiet"), 0);
  ASSERT_EQ(run_in(s.dir, "-t -i offline.model -d lines -p b --quiet"), 0);
  EXPECT_EQ(read_file(s.dir + "/a"), read_file(s.dir + "/b"));
  ASSERT_EQ(::unlink((s.dir + "/served.model").c_str()), 0);
  ASSERT_TRUE(c.send("1 |f 5:1\n"));
  EXPECT_EQ(lines_of(c.read_lines(1)).size(), 1u);
  // SIGTERM while lines are arriving: the lines being answered are delivered whole, then the connection closes.
  ASSERT_TRUE(c.send(s.lines));
  EXPECT_TRUE(d.stop());
  // One line more than were sent: read on to the end of the connection (when every line was answered in time, the
  // count alone would stop the read before the close is seen).
  const std::string tail = c.read_lines(s.count + 1, 30.0);
  EXPECT_TRUE(c.closed());
  EXPECT_TRUE(tail.empty() || tail.back() == '\n');
  EXPECT_TRUE(exists(s.dir + "/served.model"));  // SIGTERM with -f saved it
  EXPECT_EQ(run_in(s.dir, "-t -i served.model -d lines --quiet"), 0);
}

// Reloads (SIGHUP, and a `reload` line) while clients send: every line is answered, by the old model or the new.
TEST(DaemonCli, ReloadsUnderLoadDropNothing) {
  const Served s = make_served("daemon_reload");
  ASSERT_EQ(run_in(s.dir, "-d lines --loss_function logistic --learner vw-ftrl -f other --quiet"), 0);
  ASSERT_EQ(run_in(s.dir, "-t -i other -d lines -p ref_other --quiet"), 0);
  const auto ref = lines_of(s.ref), ref_other = lines_of(read_file(s.dir + "/ref_other"));
  ASSERT_EQ(std::system(("cp " + s.dir + "/m " + s.dir + "/served").c_str()), 0);
  Daemon d(s.dir, "-t -i served --num_children 2");
  ASSERT_TRUE(d.up()) << d.err();
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, answered{0}, by_other{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      Client c(d.port());
      for (int round = 0; round < 5; ++round) {
        if (!c.ok() || !c.send(s.lines)) {
          ++bad;
          return;
        }
        const auto got = lines_of(c.read_lines(s.count));
        if (got.size() != s.count) ++bad;
        for (size_t k = 0; k < got.size(); ++k) {
          if (got[k] != ref[k] && got[k] != ref_other[k]) ++bad;
          if (got[k] == ref_other[k] && got[k] != ref[k]) ++by_other;
          ++answered;
        }
      }
    });
  }
  std::thread reloader([&] {
    for (int r = 0; r < 20 && !done; ++r) {
      // Swap the file atomically (as lepus's own -f does), then ask for a reload.
      const std::string from = s.dir + (r % 2 ? "/m" : "/other");
      std::system(
          ("cp " + from + " " + s.dir + "/next && mv " + s.dir + "/next " + s.dir + "/served").c_str());
      ::kill(d.pid(), SIGHUP);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  for (auto& t : clients) t.join();
  done = true;
  reloader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(answered.load(), 4 * 5 * static_cast<int>(s.count));
  EXPECT_GT(by_other.load(), 0);  // the reloads swapped the other model in
  EXPECT_TRUE(has(d.err(), "SIGHUP: model reloaded")) << d.err();
  Client c(d.port());
  ASSERT_TRUE(c.send("reload\n"));
  EXPECT_EQ(c.read_lines(1), "reloaded\n");
  EXPECT_TRUE(d.stop());
}

// VW's wiki daemon example, as written (the daemon detaches; --port names the port), with the answer VW gives.
TEST(DaemonCli, VwWikiExampleWorksUnchanged) {
  const std::string dir = scratch_dir("daemon_wiki");
  std::FILE* f = std::fopen((dir + "/train.dat").c_str(), "w");
  std::fputs("1 first| a b c\n-1 second| d e f\n1 third| a c e\n", f);
  std::fclose(f);
  ASSERT_EQ(run_in(dir, "-d train.dat -f model.vw --quiet"), 0);
  const int port = 20000 + static_cast<int>(::getpid() % 20000);
  Daemon d(dir, "--port " + std::to_string(port) + " --quiet -i model.vw -t --num_children 1", false);
  ASSERT_EQ(d.launch_status(), 0) << d.err();
  ASSERT_TRUE(d.up()) << d.err();
  ASSERT_EQ(run_in(dir, "-t -i model.vw -d train.dat -p ref --quiet"), 0);
  Client c(port);
  ASSERT_TRUE(c.send(" abc-example| a b c\n"));
  const std::string first = lines_of(read_file(dir + "/ref")).front();
  EXPECT_EQ(c.read_lines(1), first.substr(0, first.find(' ')) + " abc-example\n");
  EXPECT_TRUE(d.stop());
}

TEST(DaemonCli, HostileClientsDoNotHurtTheOthers) {
  const Served s = make_served("daemon_hostile");
  Daemon d(s.dir, "-t -i m --num_children 2 --max_line_bytes 16K --idle_timeout 1");
  ASSERT_TRUE(d.up()) << d.err();
  const std::string first_line = s.lines.substr(0, s.lines.find('\n') + 1);
  const std::string first_ref = s.ref.substr(0, s.ref.find('\n') + 1);

  // A malformed line: an error line back, and the connection goes on.
  Client bad(d.port());
  ASSERT_TRUE(bad.send("1 |f a:1:2\n" + first_line));
  const auto answers = lines_of(bad.read_lines(2));
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].rfind("error: malformed example!", 0), 0u) << answers[0];
  EXPECT_EQ(answers[1] + "\n", first_ref);

  // Too long a line: an error line, then closed.
  Client longer(d.port());
  ASSERT_TRUE(longer.send(std::string(32768, 'a')));
  EXPECT_TRUE(has(longer.read_lines(1), "error: line longer than --max_line_bytes 16384"));
  longer.read_lines(1, 5.0);
  EXPECT_TRUE(longer.closed());

  // No newline ever, and a client that never reads its answers (long tags make them outgrow the socket buffers):
  // each is closed after the idle timeout, while another client is answered all along.
  Client silent(d.port());
  ASSERT_TRUE(silent.send("1 |f 1:1"));
  Client deaf(d.port());
  std::thread flood([&] {
    const std::string line = "1 '" + std::string(2000, 't') + "| 1:1 2:1\n";
    std::string many;
    while (many.size() < (size_t{16} << 20)) many += line;
    deaf.send(many);  // blocks once the server stops reading it; fails when the server closes it
  });
  for (int i = 0; i < 3; ++i) {
    Client good(d.port());
    ASSERT_TRUE(good.send(s.lines));
    EXPECT_EQ(good.read_lines(s.count), s.ref) << "round " << i;
  }
  silent.read_lines(1, 5.0);
  EXPECT_TRUE(silent.closed());
  flood.join();
  EXPECT_TRUE(d.up());
  EXPECT_TRUE(d.stop());
}

TEST(DaemonCli, ConnectionsBeyondTheLimitAreToldWhyAndClosed) {
  const Served s = make_served("daemon_limit");
  Daemon d(s.dir, "-t -i m --max_connections 6 --idle_timeout 60");
  ASSERT_TRUE(d.up()) << d.err();
  const std::string first_line = s.lines.substr(0, s.lines.find('\n') + 1);
  const std::string first_ref = s.ref.substr(0, s.ref.find('\n') + 1);
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < 6; ++i) {
    held.push_back(std::make_unique<Client>(d.port()));
    ASSERT_TRUE(held.back()->send(first_line));
    EXPECT_EQ(held.back()->read_lines(1), first_ref);
  }
  Client extra(d.port());
  EXPECT_TRUE(has(extra.read_lines(1), "error: too many connections (--max_connections 6)"));
  held.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Client again(d.port());
  ASSERT_TRUE(again.send(first_line));
  EXPECT_EQ(again.read_lines(1), first_ref);
  EXPECT_TRUE(d.up());
  EXPECT_TRUE(d.stop());
}

TEST(DaemonCli, RefusesWhatItCannotServe) {
  const std::string dir = scratch_dir("daemon_bad");
  EXPECT_EQ(run_in(dir, "--daemon --foreground -d x.vw 2> err"), 1);
  EXPECT_TRUE(has(read_file(dir + "/err"), "not from data files"));
  EXPECT_EQ(run_in(dir, "--daemon --foreground --listen nowhere 2> err"), 1);
  EXPECT_TRUE(has(read_file(dir + "/err"), "not an IP address"));
  EXPECT_EQ(run_in(dir, "--daemon --foreground --readable_model r 2> err"), 1);
  EXPECT_TRUE(has(read_file(dir + "/err"), "--readable_model is for runs over data files"));
  EXPECT_FALSE(exists(dir + "/r"));
  EXPECT_EQ(run_in(dir, "--port_file p -d x.vw 2> err"), 1);
  EXPECT_TRUE(has(read_file(dir + "/err"), "goes with --daemon"));
}

}  // namespace
}  // namespace lepus::e2e
