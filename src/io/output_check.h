// Output paths are checked before any example is read, so a path that cannot be written fails at once, not after
// an hour of training.
#pragma once
#include <string>

namespace lepus {

// Throws IoError ("WHAT PATH: cannot write: reason") unless `path` can be written. A directory is refused; a
// character device, FIFO or socket (/dev/stdout) is accepted as it is; otherwise the path's folder must accept
// a new file (probed with a temporary file that is removed at once), and an existing file must open for
// writing (without truncating it).
void check_writable(const std::string& path, const std::string& what);

}  // namespace lepus
