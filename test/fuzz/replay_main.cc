// Replays inputs through a fuzz target without libFuzzer: every file given, and every file (recursively)
// of every folder given (but README.md and dot files), is passed once to LLVMFuzzerTestOneInput, in sorted order. A crash, hang or
// sanitizer report fails the ctest test that runs this; "N inputs replayed" on success.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      for (const auto& e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file() && e.path().filename() != "README.md" &&
            e.path().filename().string().front() != '.')  // .gitkeep and the like
          files.push_back(e.path());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: %s: cannot read\n", f.c_str());
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // An exact-size heap copy, as libFuzzer passes it.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), data.size());
    // libFuzzer never passes a null pointer, even for an empty input; an empty vector's data() may be null.
    static const uint8_t kEmpty = 0;
    LLVMFuzzerTestOneInput(data.empty() ? &kEmpty : data.data(), data.size());
  }
  std::printf("%zu inputs replayed\n", files.size());
  return 0;
}
