// lepus model files. Layout (all little-endian):
//   "LEPUSMDL" | u32 format version | string lepus version | u64 n, n x (string name, string value, u8 given)
//   | u64 state size, state bytes (feature-space state, then the learner's own) | u32 CRC-32 of all before it.
// Written to a temporary file in the target's folder, flushed to disk, then renamed over the target, so a crash
// leaves either the old complete model or the new one. Read back whole and verified (magic, checksum,
// version) before anything is used.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "lepus/learner.h"
#include "lepus/model_io.h"

namespace lepus {

inline constexpr uint32_t kModelFormatVersion = 1;

// An option that shapes features, loss or learner, as it was in force when the model was trained.
struct SavedOption {
  std::string name;   // long option name without dashes
  std::string value;  // "" for flags
  bool given = false; // given on the command line (defaults are saved too, with given = false)
};

struct ModelFile {
  uint32_t format_version = 0;
  std::string lepus_version;
  std::vector<SavedOption> options;
  std::vector<uint8_t> state;
  // Saved with --predict_only_model: the learner state holds only what prediction needs.
  bool predict_only() const {
    for (const auto& o : options)
      if (o.name == "predict_only_model") return true;
    return false;
  }
};

// Throws IoError when the file cannot be written; the target is then untouched.
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
std::vector<uint8_t> model_bytes(const std::vector<SavedOption>& options, const std::vector<uint8_t>& state);

}  // namespace lepus
