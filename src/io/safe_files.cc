#include "io/safe_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "lepus/errors.h"

namespace lepus {
namespace {

std::string name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Fixed slots, so the signal handler reads them without allocating or locking.
constexpr size_t kSlots = 16;
struct Slot {
  std::atomic<bool> used{false};
  char path[PATH_MAX + 1] = {};
};
std::array<Slot, kSlots> g_slots;
std::mutex g_slots_mutex;  // writers only; the handler reads `used` and the path

}  // namespace

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

bool FileIdentity::same_as(const FileIdentity& o) const {
  if (exists && o.exists) return dev == o.dev && ino == o.ino;
  if (exists != o.exists) return false;
  return !canonical.empty() && canonical == o.canonical;
}

FileIdentity file_identity(const std::string& path) {
  FileIdentity id;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {  // stat follows links
    id.exists = true;
    id.regular = S_ISREG(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  char buf[PATH_MAX];
  if (::realpath(folder_of(path).c_str(), buf)) id.canonical = std::string(buf) + "/" + name_of(path);
  return id;
}

void register_temp_file(const std::string& path) {
  if (path.size() > PATH_MAX) return;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (auto& s : g_slots) {
    if (s.used.load()) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.used.store(true);
    return;
  }
}

void unregister_temp_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (auto& s : g_slots)
    if (s.used.load() && path == s.path) s.used.store(false);
}

void remove_temp_files() noexcept {
  for (auto& s : g_slots)
    if (s.used.load()) ::unlink(s.path);
}

std::string temp_name_for(const std::string& target) {
  const std::string prefix = name_of(target) + ".lepus-tmp.";
  if (DIR* d = ::opendir(folder_of(target).c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind(prefix, 0) != 0) continue;
      char* end = nullptr;
      const long pid = std::strtol(n.c_str() + prefix.size(), &end, 10);
      if (pid <= 0 || *end != '\0' || pid == ::getpid()) continue;
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)  // its run is gone: stale
        ::unlink((folder_of(target) + "/" + n).c_str());
    }
    ::closedir(d);
  }
  return target + ".lepus-tmp." + std::to_string(::getpid());
}

mode_t mode_for_replacing(const std::string& target) {
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  static const mode_t mask = [] {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return 0666 & ~mask;
}

std::string replaced_target(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) return buf;
  }
  return path;
}

void move_into_place(const std::string& from, const std::string& path) {
  const std::string target = replaced_target(path);
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fchmod(fd, mode_for_replacing(target));
    ::close(fd);
  }
  if (::rename(from.c_str(), target.c_str()) != 0)
    throw IoError(path + ": cannot write the model: " + std::strerror(errno));
  const int dfd = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_text_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string target = replaced_target(path);
  struct stat st;
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory");
  if (exists && !S_ISREG(st.st_mode)) {  // a device or FIFO: written through, nothing to replace
    std::ofstream out(target);
    if (!out) throw IoError(path + ": cannot open for writing");
    write(out);
    out.flush();
    if (!out) throw IoError(path + ": write failed");
    return;
  }
  const std::string tmp = temp_name_for(target);
  register_temp_file(tmp);
  auto fail = [&](const std::string& why) {
    ::unlink(tmp.c_str());
    unregister_temp_file(tmp);
    return IoError(path + ": " + why + " (the previous file, if any, is unchanged)");
  };
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw fail("cannot create a temporary file in " + folder_of(target));
    try {
      write(out);
    } catch (...) {
      out.close();
      ::unlink(tmp.c_str());
      unregister_temp_file(tmp);
      throw;
    }
    out.flush();
    if (!out) throw fail("write failed (disk full?)");
  }
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fchmod(fd, mode_for_replacing(target)) == 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!synced) throw fail(std::string("cannot flush: ") + std::strerror(errno));
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    throw fail(std::string("cannot write: ") + std::strerror(errno));
  unregister_temp_file(tmp);
}

}  // namespace lepus
