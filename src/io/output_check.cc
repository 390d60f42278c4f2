#include "io/output_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "io/safe_files.h"
#include "lepus/errors.h"

namespace lepus {

void check_writable(const std::string& path, const std::string& what) {
  auto fail = [&](const std::string& why) { throw IoError(what + " " + path + ": cannot write: " + why); };
  if (path.empty()) fail("empty file name");
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail("it is a directory");
  if (exists && !S_ISREG(st.st_mode)) return;  // a device, FIFO or socket is written through as it is
  std::string probe = folder_of(path) + "/.lepus-probe-XXXXXX";
  std::vector<char> name(probe.begin(), probe.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(std::strerror(errno));
  ::close(fd);
  ::unlink(name.data());
  if (exists) {
    const int f = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (f < 0) fail(std::strerror(errno));
    ::close(f);
  }
}

}  // namespace lepus
