// lepus model files. Layout of format version 2 (all little-endian):
//   "LEPUSMDL" | u32 format version | string lepus version | u64 n, n x (string name, string value, u8 given)
//   | sections, each: u32 tag | u32 section version | u64 length | that many bytes
//   | u32 0 (end of sections) | u32 CRC-32 of all before it.
// Sections: 'FSPC' the feature space's state, then 'LRNR' the learner's own. Each part writes its section
// straight into the temporary file (ModelFileWriter), so saving costs a buffer, not a copy of the state.
// Version 1 (one u64-sized state holding both parts) still loads. The file is written to a temporary file in
// the target's folder, flushed to disk, then renamed over the target, so a crash leaves either the old complete
// model or the new one. Read back whole and verified (magic, checksum, version, every count bounded by the bytes
// present) before anything is used.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "lepus/learner.h"
#include "lepus/model_io.h"

namespace lepus {

inline constexpr uint32_t kModelFormatVersion = 2;
inline constexpr uint32_t kSectionFeatureSpace = 0x43505346;  // "FSPC"
inline constexpr uint32_t kSectionLearner = 0x524E524C;       // "LRNR"

// An option that shapes features, loss or learner, as it was in force when the model was trained.
struct SavedOption {
  std::string name;    // long option name without dashes
  std::string value;   // "" for flags
  bool given = false;  // given on the command line (defaults are saved too, with given = false)
};

struct ModelFile {
  uint32_t format_version = 0;
  std::string lepus_version;
  std::vector<SavedOption> options;
  std::vector<uint8_t> state;  // the sections' bytes in file order (version 1: its one state)
  // Saved with --predict_only_model: the learner state holds only what prediction needs.
  bool predict_only() const {
    for (const auto& o : options)
      if (o.name == "predict_only_model") return true;
    return false;
  }
};

// Streams a model file: the header and options, then each section as it is produced, into a temporary file
// renamed over the target by commit() (a device, FIFO or socket target is written through instead, never
// replaced). Destroyed without commit(), it leaves the target as it was. Throws IoError when a write fails.
class ModelFileWriter {
 public:
  ModelFileWriter(const std::string& path, const std::vector<SavedOption>& options);
  ~ModelFileWriter();
  ModelFileWriter(const ModelFileWriter&) = delete;
  ModelFileWriter& operator=(const ModelFileWriter&) = delete;
  // What the section's part puts into writer() between begin_section() and end_section() is its content.
  void begin_section(uint32_t tag, uint32_t version);
  ModelWriter& writer() { return writer_; }
  void end_section();
  void commit();

 private:
  void emit(const uint8_t* p, size_t n);
  std::string path_, target_, tmp_;
  int fd_ = -1;                  // the temporary file, or -1 for a device target (bytes kept in memory_)
  std::vector<uint8_t> memory_;  // a device target's bytes
  uint64_t offset_ = 0;          // bytes emitted so far
  uint64_t section_length_at_ = 0;
  bool committed_ = false;
  ModelWriter writer_;
};

// A model with one learner section holding `state` (tests and tools). Throws IoError; the target is then
// untouched.
void write_model_file(const std::string& path, const std::vector<SavedOption>& options,
                      const std::vector<uint8_t>& state);

// Throws ModelFormatError (naming the file and what is wrong) or IoError.
ModelFile read_model_file(const std::string& path);

// Saves the feature-space state and the learner's (only what prediction needs when predict_only) with
// write_model_file. A state holding a non-finite value (which loading refuses) is never written: IoError, and the
// previous file stays as it was.
void save_model(const std::string& path, const std::vector<SavedOption>& options, const FeatureSpace& space,
                const Learner& learner, bool predict_only);

// Parses model bytes already in memory (what read_model_file does after reading); `source` names them.
ModelFile parse_model_bytes(const std::vector<uint8_t>& bytes, const std::string& source);
// A model file's bytes with one learner section holding `state` (tests, fuzzing).
std::vector<uint8_t> model_bytes(const std::vector<SavedOption>& options, const std::vector<uint8_t>& state);

}  // namespace lepus
