// Model files: round trip, and every way a file can be damaged is refused with a ModelFormatError.
#include "io/model_file.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "lepus/errors.h"
#include "lepus/model_io.h"

namespace lepus {
namespace {

std::vector<SavedOption> some_options() {
  return {{"bit_precision", "18", false},
          {"quadratic", "ff", true},
          {"quadratic", "ab", true},
          {"noconstant", "", true},
          {"learner", "sgd", false}};
}
std::vector<uint8_t> some_state() {
  std::vector<uint8_t> s(300);
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(i * 7 + 3);
  return s;
}

TEST(ModelFile, RoundTripsOptionsAndState) {
  const auto bytes = model_bytes(some_options(), some_state());
  const ModelFile m = parse_model_bytes(bytes, "mem");
  EXPECT_EQ(m.format_version, kModelFormatVersion);
  EXPECT_EQ(m.lepus_version, LEPUS_VERSION);
  ASSERT_EQ(m.options.size(), some_options().size());
  for (size_t i = 0; i < m.options.size(); ++i) {
    EXPECT_EQ(m.options[i].name, some_options()[i].name);
    EXPECT_EQ(m.options[i].value, some_options()[i].value);
    EXPECT_EQ(m.options[i].given, some_options()[i].given);
  }
  EXPECT_EQ(m.state, some_state());
}

// The check RegistryNumerics relies on: every float and double put is counted and checked; untyped bytes are
// counted apart.
TEST(ModelWriter, CountsEveryNumberAndTheNonFiniteOnes) {
  ModelWriter w;
  w.put_u32(7);
  w.put_f32(1.5f);
  w.put_f64(std::nan(""));
  const float floats[] = {0.0f, INFINITY, -1.0f};
  const double doubles[] = {2.0, -INFINITY};
  w.put_values(floats, 3);
  w.put_values(doubles, 2);
  w.put_string("abc");
  EXPECT_EQ(w.values(), 7u);
  EXPECT_EQ(w.nonfinite(), 3u);
  EXPECT_EQ(w.untyped_bytes(), 0u);
  w.put_raw(floats, sizeof floats);
  EXPECT_EQ(w.untyped_bytes(), sizeof floats);
  EXPECT_EQ(w.values(), 7u);
}

TEST(ModelFile, EveryTruncationIsRefused) {
  const auto bytes = model_bytes(some_options(), some_state());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    EXPECT_THROW(parse_model_bytes(cut, "cut"), ModelFormatError) << "length " << n;
  }
}

TEST(ModelFile, EveryFlippedByteIsRefused) {
  const auto bytes = model_bytes(some_options(), some_state());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      auto bad = bytes;
      bad[i] ^= mask;
      EXPECT_THROW(parse_model_bytes(bad, "flipped"), ModelFormatError) << "byte " << i;
    }
  }
}

std::string message_of(const std::vector<uint8_t>& b) {
  try {
    parse_model_bytes(b, "m.bin");
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelFile, SaysWhatIsWrong) {
  EXPECT_EQ(message_of({}), "m.bin: not a lepus model: the file is empty");
  EXPECT_NE(message_of({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}).find("not a lepus model"),
            std::string::npos);
  auto bytes = model_bytes(some_options(), some_state());
  bytes[bytes.size() - 10] ^= 1;
  EXPECT_NE(message_of(bytes).find("checksum mismatch"), std::string::npos);
  bytes.resize(40);
  EXPECT_NE(message_of(bytes).find("checksum mismatch"), std::string::npos);
}

TEST(ModelFile, OtherFormatVersionIsNamed) {
  // A well-formed file of format version 3 (checksum recomputed), as a future lepus would write it.
  auto bytes = model_bytes(some_options(), some_state());
  bytes[8] = 3;
  bytes.resize(bytes.size() - 4);
  // Recompute the trailing CRC-32 the way the format defines it (zlib's crc32).
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xFFFFFFFFu;
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  bytes.insert(bytes.end(), c, c + 4);
  EXPECT_NE(message_of(bytes).find("format version 3"), std::string::npos) << message_of(bytes);
}

// zlib's CRC-32, as the format defines the trailer.
uint32_t crc32_of(const std::vector<uint8_t>& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}
template <class T>
void put(std::vector<uint8_t>& b, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof v);
}
void put_string(std::vector<uint8_t>& b, const std::string& s) {
  put<uint64_t>(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}
std::vector<uint8_t> with_crc(std::vector<uint8_t> b) {
  put<uint32_t>(b, crc32_of(b));
  return b;
}
// The header every version shares: magic, version, lepus version, one option.
std::vector<uint8_t> header(uint32_t version) {
  std::vector<uint8_t> b = {'L', 'E', 'P', 'U', 'S', 'M', 'D', 'L'};
  put<uint32_t>(b, version);
  put_string(b, "0.1.0");
  put<uint64_t>(b, 1);
  put_string(b, "learner");
  put_string(b, "sgd");
  put<uint8_t>(b, 0);
  return b;
}

// Version 1 (before sections): one u64-sized state. Still loads.
TEST(ModelFile, VersionOneStillLoads) {
  auto b = header(1);
  const auto state = some_state();
  put<uint64_t>(b, state.size());
  b.insert(b.end(), state.begin(), state.end());
  const ModelFile m = parse_model_bytes(with_crc(b), "v1");
  EXPECT_EQ(m.format_version, 1u);
  EXPECT_EQ(m.state, some_state());
}

// Version 2: sections in order, concatenated into the state; unknown, out-of-order, newer or overlong sections
// are refused naming the problem.
TEST(ModelFile, SectionsAreCheckedAndConcatenated) {
  auto section = [](std::vector<uint8_t>& b, uint32_t tag, uint32_t version, const std::vector<uint8_t>& body,
                    uint64_t length) {
    put<uint32_t>(b, tag);
    put<uint32_t>(b, version);
    put<uint64_t>(b, length);
    b.insert(b.end(), body.begin(), body.end());
  };
  const std::vector<uint8_t> fs = {1, 2, 3}, lr = {4, 5};
  auto good = header(2);
  section(good, kSectionFeatureSpace, 1, fs, 3);
  section(good, kSectionLearner, 1, lr, 2);
  put<uint32_t>(good, 0);
  EXPECT_EQ(parse_model_bytes(with_crc(good), "ok").state, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
  auto error = [&](uint32_t tag1, uint32_t tag2, uint32_t version, uint64_t length2) {
    auto b = header(2);
    section(b, tag1, 1, fs, 3);
    section(b, tag2, version, lr, length2);
    put<uint32_t>(b, 0);
    return message_of(with_crc(b));
  };
  EXPECT_NE(error(kSectionFeatureSpace, 0x4E4B4E55, 1, 2).find("unknown model section"), std::string::npos);
  EXPECT_NE(error(kSectionLearner, kSectionFeatureSpace, 1, 2).find("out of order"), std::string::npos);
  EXPECT_NE(error(kSectionFeatureSpace, kSectionLearner, 2, 2).find("section version 2"), std::string::npos);
  EXPECT_NE(error(kSectionFeatureSpace, kSectionLearner, 1, 1u << 30).find("past the end"),
            std::string::npos);
}

TEST(ModelFile, RecognisesVwModels) {
  std::ifstream in(LEPUS_TEST_DATA "/vw/e2e/vw_tiny.model", std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(b.empty());
  const std::string m = message_of(b);
  EXPECT_NE(m.find("Vowpal Wabbit model (VW 9.11.2)"), std::string::npos) << m;
}

TEST(ModelFile, AtomicWriteReplacesAndLeavesNoTemporaries) {
  const auto dir = std::filesystem::temp_directory_path() / ("lepus_model_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.lepus").string();
  write_model_file(path, some_options(), some_state());
  write_model_file(path, {{"learner", "sgd", true}}, {1, 2, 3});
  const ModelFile m = read_model_file(path);
  EXPECT_EQ(m.state, (std::vector<uint8_t>{1, 2, 3}));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  EXPECT_THROW(write_model_file((dir / "no/such/dir/m").string(), {}, {}), IoError);
  EXPECT_THROW(read_model_file((dir / "absent").string()), IoError);
  EXPECT_THROW(read_model_file(dir.string()), IoError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lepus

namespace lepus {
namespace {

// A learner whose state has gone non-finite (an overflow): save_model refuses it, and the file already there
// stays as it was, since loading would refuse such a model.
class NonFiniteLearner final : public Learner {
 public:
  Prediction predict(const Example&) const override { return {}; }
  Prediction learn(const Example&) override { return {}; }
  void save(ModelWriter& out) const override {
    out.put_f32(1.0f);
    const double state[2] = {0.5, std::nan("")};
    out.put_values(state, 2);
  }
  void load(ModelReader&) override {}
  std::string_view name() const override { return "nonfinite"; }
  void write_readable(std::ostream&) const override {}
};

TEST(SaveModel, NonFiniteStateIsNeverWritten) {
  const auto dir = std::filesystem::temp_directory_path() / ("lepus_nonfinite_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m").string();
  std::ofstream(path) << "the previous model";
  FeatureSpace space(FeatureSpaceOptions{});
  NonFiniteLearner learner;
  try {
    save_model(path, {}, space, learner, false);
    ADD_FAILURE() << "saved a non-finite state";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("1 non-finite value"), std::string::npos) << e.what();
  }
  std::ifstream in(path);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "the previous model");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lepus
