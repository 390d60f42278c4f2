// Fuzz target: a model is data, not a command line. The input is a list of option records, one per line
// (NAME=VALUE, or NAME alone for a switch; a leading '!' marks it not given). They become a model file with a
// valid checksum (and an empty state), and `lepus -i MODEL` is parsed as the command line would be. Whatever
// the records say, parsing either refuses the model with lepus's typed error or yields a configuration whose
// outputs, passes, example count, cache and mode are the command line's own (none of them here): a model can
// shape features, loss and learner, and nothing else.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config.h"
#include "fuzz_common.h"
#include "io/model_file.h"
#include "lepus/errors.h"

using namespace lepus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<SavedOption> options;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty() && options.size() < 64) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    SavedOption o;
    o.given = true;
    if (!line.empty() && line[0] == '!') {
      o.given = false;
      line.remove_prefix(1);
    }
    const size_t eq = line.find('=');
    o.name = std::string(line.substr(0, eq));
    if (eq != std::string_view::npos) o.value = std::string(line.substr(eq + 1));
    options.push_back(std::move(o));
  }
  const std::vector<uint8_t> bytes = model_bytes(options, {});
  const int fd = ::memfd_create("lepus-fuzz-model", 0);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const char* argv[] = {"lepus", "-i", path.c_str(), "--no_stdin"};
  try {
    const cli::Config c = cli::parse_command_line(4, argv);
    FUZZ_CHECK(c.driver.predictions.empty());
    FUZZ_CHECK(c.driver.raw_predictions.empty());
    FUZZ_CHECK(c.final_regressor.empty());
    FUZZ_CHECK(c.readable_model.empty());
    FUZZ_CHECK(c.driver.cache_file.empty());
    FUZZ_CHECK(c.driver.passes == 1);
    FUZZ_CHECK(c.driver.max_examples == std::numeric_limits<uint64_t>::max());
    FUZZ_CHECK(!c.driver.test_only);
    FUZZ_CHECK(c.driver.data.empty());
    FUZZ_CHECK(c.bits >= 1 && c.bits <= 32);
  } catch (const Error&) {  // refused: the typed error lepus prints in one line
  }
  ::close(fd);
  return 0;
}
