// Load client for utl/bench_daemon (issue 21): C connections to a `lepus --daemon` on 127.0.0.1, each sending
// N example lines and checking every answer against the reference predictions; optionally reloads the model R
// times during the run (SIGHUP to the daemon). Compiled by utl/bench_daemon itself:
//   g++ -O2 -std=c++20 -pthread utl/daemon_load.cc -o bench_data/daemon/daemon_load
//
// Usage: daemon_load --port P --pid PID --data FILE --ref FILE [--ref2 FILE] --base B --clients C --lines N
//                    --window W [--reloads R --log FILE [--model PATH --model_a FILE --model_b FILE]]
//                    [--stall_seconds S]
// Client c sends lines o_c .. o_c+N-1 of --data (o_c = c*B/C: the clients start at different offsets of the B
// distinct lines), keeping at most W lines in flight (W = 1: strictly request-response: one line is written,
// its answer read, then the next). Line i's answer must equal line o_c+i of --ref (or of --ref2, the other
// model's reference, when reloads alternate two models).
// Latency of a line: from the write() that sent it (a batch of lines written at once shares that instant) to the
// read() that returned its whole answer; with W > 1 it includes the wait behind the lines ahead of it. Also
// reported: the median latency of each client's last W lines (those after which it sends nothing more).
// Reloads: the k-th (k = 1..R) is made when the clients together have received k/(R+1) of all answers: with
// --model, model_a or model_b (alternately, b first) is hard-linked to a temporary name next to --model and
// renamed over it (atomic), then SIGHUP is sent and the reloader waits (up to 30 s) until --log (the daemon's
// stderr) holds k "SIGHUP: model reloaded" lines, so that signals never coalesce and every reload read the
// file just put in place.
// Prints one JSON object on stdout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  int port = 0;
  long pid = 0;
  std::string data, ref, ref2, log, model, model_a, model_b;
  long base = 1000;
  int clients = 64;
  long lines = 10000;
  long window = 1;
  int reloads = 0;
  double stall_seconds = 30;
};

std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t nl; (nl = text.find('\n', b)) != std::string::npos; b = nl + 1)
    out.emplace_back(text.data() + b, nl - b);
  if (b < text.size()) out.emplace_back(text.data() + b, text.size() - b);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "daemon_load: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double cpu_seconds_of(long pid) {  // utime + stime of a process, from /proc/PID/stat
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream f(s.substr(close + 2));
  std::string field;
  unsigned long long ut = 0, st = 0;
  for (int i = 3; i <= 15 && (f >> field); ++i) {  // field 3 is the state; 14 utime, 15 stime
    if (i == 14) ut = std::stoull(field);
    if (i == 15) st = std::stoull(field);
  }
  return double(ut + st) / double(sysconf(_SC_CLK_TCK));
}

double machine_busy_seconds() {  // all cores' non-idle time, from /proc/stat's first line
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  in >> cpu;
  for (auto& x : v) in >> x;  // user nice system idle iowait irq softirq steal
  return double(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / double(sysconf(_SC_CLK_TCK));
}

double self_cpu_seconds(bool system_only = false) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double sys = u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
  return system_only ? sys : u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + sys;
}

size_t count_in_file(const std::string& path, const std::string& needle) {
  const std::string s = slurp(path);
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

struct Result {
  long answered = 0;        // answers received (up to N)
  long matched_a = 0;       // equal to --ref (and not only to --ref2)
  long matched_b_only = 0;  // equal to --ref2 only
  long mismatched = 0;      // neither (error lines included)
  long error_lines = 0;     // answers starting with "error"
  long extra = 0;           // answer lines beyond N
  bool connect_failed = false, reset = false, stalled = false, eof_early = false;
  std::string first_problem;
  std::vector<float> latency_us;
  std::vector<float> tail_us;  // the last window's lines (sent once the client has nothing more to send)
};

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--port")
      a.port = std::stoi(v);
    else if (k == "--pid")
      a.pid = std::stol(v);
    else if (k == "--data")
      a.data = v;
    else if (k == "--ref")
      a.ref = v;
    else if (k == "--ref2")
      a.ref2 = v;
    else if (k == "--base")
      a.base = std::stol(v);
    else if (k == "--clients")
      a.clients = std::stoi(v);
    else if (k == "--lines")
      a.lines = std::stol(v);
    else if (k == "--window")
      a.window = std::max(1L, std::stol(v));
    else if (k == "--reloads")
      a.reloads = std::stoi(v);
    else if (k == "--log")
      a.log = v;
    else if (k == "--model")
      a.model = v;
    else if (k == "--model_a")
      a.model_a = v;
    else if (k == "--model_b")
      a.model_b = v;
    else if (k == "--stall_seconds")
      a.stall_seconds = std::stod(v);
    else {
      std::fprintf(stderr, "daemon_load: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const std::string data_text = slurp(a.data), ref_text = slurp(a.ref);
  const std::string ref2_text = a.ref2.empty() ? std::string() : slurp(a.ref2);
  const auto data = split_lines(data_text), ref = split_lines(ref_text), ref2 = split_lines(ref2_text);
  std::vector<long> offset(a.clients);
  for (int c = 0; c < a.clients; ++c) offset[c] = long(c) * a.base / a.clients;
  const long need = a.base * (a.clients - 1) / a.clients + a.lines;
  if (long(data.size()) < need || long(ref.size()) < need || (!a.ref2.empty() && long(ref2.size()) < need)) {
    std::fprintf(stderr, "daemon_load: --data/--ref need %ld lines\n", need);
    return 2;
  }

  const long total = long(a.clients) * a.lines;
  std::atomic<long> answered_all{0};
  std::atomic<int> clients_done{0};
  std::vector<Result> results(a.clients);
  std::vector<int> fds(a.clients, -1);
  // Every client connects first; the clock starts when all are connected.
  for (int c = 0; c < a.clients; ++c) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(a.port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      results[c].connect_failed = true;
      results[c].first_problem = std::string("connect: ") + std::strerror(errno);
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{};
    tv.tv_sec = long(a.stall_seconds);
    tv.tv_usec = long((a.stall_seconds - double(tv.tv_sec)) * 1e6);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    fds[c] = fd;
  }
  std::barrier start(a.clients + 1);
  Clock::time_point t0;
  std::vector<Clock::time_point> done_at(a.clients);

  auto client = [&](int c) {
    Result& r = results[c];
    const int fd = fds[c];
    start.arrive_and_wait();
    if (fd < 0) {
      done_at[c] = Clock::now();
      ++clients_done;
      return;
    }
    r.latency_us.reserve(size_t(a.lines));
    const long o = offset[c];
    std::vector<Clock::time_point> sent_at(size_t(a.lines));
    long sent = 0, got = 0;
    std::string in;
    in.reserve(1 << 16);
    size_t scan = 0;  // `in` before this holds no newline
    char buf[1 << 16];
    bool closed_write = false;
    auto fail = [&](bool& flag, const std::string& what) {
      flag = true;
      if (r.first_problem.empty()) r.first_problem = what + " after " + std::to_string(got) + " answers";
    };
    while (true) {
      if (sent < a.lines && sent - got < a.window) {  // top the window up: one write() for the lines it takes
        const long upto = std::min(a.lines, got + a.window);
        const char* from = data[size_t(o + sent)].data();
        const char* to = data[size_t(o + upto - 1)].data() + data[size_t(o + upto - 1)].size() + 1;
        const auto now = Clock::now();
        for (long i = sent; i < upto; ++i) sent_at[size_t(i)] = now;
        size_t off = 0, len = size_t(to - from);
        bool bad = false;
        while (off < len) {
          const ssize_t w = ::send(fd, from + off, len - off, 0);
          if (w < 0) {
            if (errno == EINTR) continue;
            fail(r.reset, std::string("send: ") + std::strerror(errno));
            bad = true;
            break;
          }
          off += size_t(w);
        }
        if (bad) break;
        sent = upto;
      }
      if (sent == a.lines && got >= a.lines && !closed_write) {
        shutdown(fd, SHUT_WR);  // all answered: anything after this but EOF is an extra answer
        closed_write = true;
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);  // SO_RCVTIMEO: gives up after --stall_seconds
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          fail(r.stalled, "no answer for " + std::to_string(a.stall_seconds) + " s");
          break;
        }
        fail(r.reset, std::string("recv: ") + std::strerror(errno));
        break;
      }
      if (n == 0) {
        if (got < a.lines) fail(r.eof_early, "connection closed by the daemon");
        break;
      }
      const auto now = Clock::now();
      in.append(buf, size_t(n));
      size_t b = 0;
      for (size_t nl; (nl = in.find('\n', scan)) != std::string::npos; b = scan = nl + 1) {
        const std::string_view line(in.data() + b, nl - b);
        if (got >= a.lines) {
          ++r.extra;
          if (r.first_problem.empty()) r.first_problem = "extra answer: " + std::string(line.substr(0, 200));
          continue;
        }
        const size_t k = size_t(o + got);
        if (line == ref[k]) {
          ++r.matched_a;
        } else if (!a.ref2.empty() && line == ref2[k]) {
          ++r.matched_b_only;
        } else {
          ++r.mismatched;
          if (line.rfind("error", 0) == 0) ++r.error_lines;
          if (r.first_problem.empty())
            r.first_problem = "line " + std::to_string(got) + ": got '" + std::string(line.substr(0, 200)) +
                              "' expected '" + std::string(ref[k]) + "'";
        }
        r.latency_us.push_back(std::chrono::duration<float, std::micro>(now - sent_at[size_t(got)]).count());
        if (got >= a.lines - a.window) r.tail_us.push_back(r.latency_us.back());
        ++got;
        answered_all.fetch_add(1, std::memory_order_relaxed);
      }
      in.erase(0, b);
      scan = in.size();
    }
    r.answered = got;
    close(fd);
    done_at[c] = Clock::now();
    ++clients_done;
  };

  std::vector<std::thread> pool;
  for (int c = 0; c < a.clients; ++c) pool.emplace_back(client, c);
  const double daemon_cpu0 = a.pid > 0 ? cpu_seconds_of(a.pid) : -1;
  const double self_cpu0 = self_cpu_seconds(), self_sys0 = self_cpu_seconds(true);
  const double busy0 = machine_busy_seconds();
  t0 = Clock::now();
  start.arrive_and_wait();

  // The reloader (this thread).
  int reloads_sent = 0, reloads_logged = 0, reloads_after_end = 0, reload_timeouts = 0;
  std::vector<double> reload_ms;
  const std::string kLogged = "SIGHUP: model reloaded";
  for (int k = 1; k <= a.reloads && a.pid > 0; ++k) {
    const long at = long(double(total) * k / (a.reloads + 1));
    while (answered_all.load(std::memory_order_relaxed) < at && clients_done.load() < a.clients)
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (answered_all.load() >= total) ++reloads_after_end;
    if (!a.model.empty()) {
      const std::string& from = (k % 2 == 1) ? a.model_b : a.model_a;
      const std::string tmp = a.model + ".swap";
      unlink(tmp.c_str());
      if (link(from.c_str(), tmp.c_str()) != 0 || rename(tmp.c_str(), a.model.c_str()) != 0) {
        std::fprintf(stderr, "daemon_load: cannot put %s in place: %s\n", from.c_str(), std::strerror(errno));
        return 2;
      }
    }
    const auto s = Clock::now();
    kill(pid_t(a.pid), SIGHUP);
    ++reloads_sent;
    bool seen = false;
    while (Clock::now() - s < std::chrono::seconds(30)) {
      if (!a.log.empty() && long(count_in_file(a.log, kLogged)) >= k) {
        seen = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (seen)
      reload_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    else
      ++reload_timeouts;
  }
  for (auto& t : pool) t.join();
  const auto t1 = *std::max_element(done_at.begin(), done_at.end());
  const double wall = std::chrono::duration<double>(t1 - t0).count();
  const double daemon_cpu = a.pid > 0 ? cpu_seconds_of(a.pid) - daemon_cpu0 : -1;
  const double self_cpu = self_cpu_seconds() - self_cpu0, self_sys = self_cpu_seconds(true) - self_sys0;
  const double busy = machine_busy_seconds() - busy0;
  if (!a.log.empty()) reloads_logged = int(count_in_file(a.log, kLogged));

  long answered = 0, matched_a = 0, matched_b = 0, mismatched = 0, error_lines = 0, extra = 0;
  int connect_failed = 0, resets = 0, stalls = 0, eofs = 0;
  std::vector<float> lat, tail;
  lat.reserve(size_t(total));
  std::string problems;
  int shown = 0;
  for (int c = 0; c < a.clients; ++c) {
    const Result& r = results[c];
    answered += r.answered;
    matched_a += r.matched_a;
    matched_b += r.matched_b_only;
    mismatched += r.mismatched;
    error_lines += r.error_lines;
    extra += r.extra;
    connect_failed += r.connect_failed;
    resets += r.reset;
    stalls += r.stalled;
    eofs += r.eof_early;
    lat.insert(lat.end(), r.latency_us.begin(), r.latency_us.end());
    tail.insert(tail.end(), r.tail_us.begin(), r.tail_us.end());
    if (!r.first_problem.empty() && shown < 5) {
      std::string p;
      for (char ch : "client " + std::to_string(c) + ": " + r.first_problem)
        if (ch == '"' || ch == '\\')
          p += ' ';
        else if (ch >= 32)
          p += ch;
      problems += std::string(shown ? "," : "") + "\"" + p + "\"";
      ++shown;
    }
  }
  auto pct = [&](double q) -> double {
    if (lat.empty()) return -1;
    const size_t i = std::min(lat.size() - 1, size_t(q * double(lat.size())));
    std::nth_element(lat.begin(), lat.begin() + long(i), lat.end());
    return lat[i];
  };
  const double p50 = pct(0.50), p99 = pct(0.99), p999 = pct(0.999);
  const double lmax = lat.empty() ? -1 : *std::max_element(lat.begin(), lat.end());
  double tail_p50 = -1;
  if (!tail.empty()) {
    std::nth_element(tail.begin(), tail.begin() + long(tail.size() / 2), tail.end());
    tail_p50 = tail[tail.size() / 2];
  }
  double rl_med = -1, rl_max = -1;
  if (!reload_ms.empty()) {
    std::sort(reload_ms.begin(), reload_ms.end());
    rl_med = reload_ms[reload_ms.size() / 2];
    rl_max = reload_ms.back();
  }
  const long missing = total - answered;
  std::printf(
      "{\"clients\": %d, \"lines\": %ld, \"window\": %ld, \"wall_s\": %.4f, \"answered\": %ld, "
      "\"lines_per_s\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"p999_us\": %.1f, \"max_us\": %.1f, "
      "\"last_window_p50_us\": %.1f, \"matched_a\": %ld, \"matched_b_only\": %ld, \"mismatched\": %ld, "
      "\"error_lines\": %ld, \"missing\": %ld, \"extra\": %ld, \"failed\": %ld, \"connect_failed\": %d, "
      "\"resets\": %d, \"stalls\": %d, \"early_eof\": %d, \"daemon_cpu_s\": %.3f, \"client_cpu_s\": %.3f, "
      "\"client_sys_s\": %.3f, \"machine_busy_s\": %.3f, \"reloads_sent\": %d, \"reloads_logged\": %d, "
      "\"reloads_after_end\": %d, \"reload_timeouts\": %d, \"reload_ms_median\": %.2f, "
      "\"reload_ms_max\": %.2f, \"problems\": [%s]}\n",
      a.clients, a.lines, a.window, wall, answered, double(answered) / wall, p50, p99, p999, lmax, tail_p50,
      matched_a, matched_b, mismatched, error_lines, missing, extra, mismatched + missing + extra,
      connect_failed, resets, stalls, eofs, daemon_cpu, self_cpu, self_sys, busy, reloads_sent,
      reloads_logged, reloads_after_end, reload_timeouts, rl_med, rl_max, problems.c_str());
  return 0;
}
