// What keeps a user's files safe: file identity (so an output never names an input, however spelled), the
// temporary files lepus writes before renaming them into place (removed by a fatal signal, and recognised and
// removed when a killed run left them behind), and the permissions a saved file gets.
#pragma once
#include <sys/types.h>
#include <functional>
#include <ostream>
#include <string>

namespace lepus {

// The folder a path names a file in ("." for a bare name).
std::string folder_of(const std::string& path);

// A path's identity: device and inode when it exists (links resolved); otherwise its canonical spelling (the
// real path of its folder, then its name), so "out.txt" and "./out.txt" are one file before either exists.
struct FileIdentity {
  bool exists = false;
  bool regular = false;  // an existing regular file (not a device, FIFO, socket or directory)
  dev_t dev = 0;
  ino_t ino = 0;
  std::string canonical;  // for a path that does not exist yet
  bool same_as(const FileIdentity& o) const;
};
FileIdentity file_identity(const std::string& path);

// Temporary files being written. A fatal signal's handler calls remove_temp_files(), which is
// async-signal-safe; register before creating the file, unregister after renaming it.
void register_temp_file(const std::string& path);
void unregister_temp_file(const std::string& path);
void remove_temp_files() noexcept;

// The name of a temporary file for `target` in the target's folder: "TARGET.lepus-tmp.PID". Before it is
// used, temporaries of the same target left by runs that no longer exist (killed with SIGKILL) are removed.
std::string temp_name_for(const std::string& target);

// The mode a new file gets (0666 less the umask), or an existing target's own mode when it is replaced.
mode_t mode_for_replacing(const std::string& target);

// The file `path` names: itself, or the file a symbolic link at `path` names (links stay; what they name is
// replaced, as VW writes through the path).
std::string replaced_target(const std::string& path);

// Renames the finished file `from` (in the target's folder) over `path`'s target, with `path`'s mode kept,
// and makes the rename durable. Throws IoError naming `path`.
void move_into_place(const std::string& from, const std::string& path);

// Writes a text output (--readable_model, --invert_hash) as model files are written: into a temporary file in
// the target's folder, renamed over the target once whole, so a full disk, an error or a kill leaves the old
// file as it was. A symbolic link stays and the file it names is replaced (VW writes through the path); a
// device or FIFO
// (/dev/stdout) is written through. Throws IoError naming the path.
void write_text_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace lepus
