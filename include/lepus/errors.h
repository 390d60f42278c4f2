// Typed errors thrown by library code. Only src/cli catches them, prints one line and exits.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace lepus {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad or inconsistent option; raised before any data is read.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A malformed input line under --strict_parse. what() is "source:line: message".
class ParseError : public Error {
 public:
  ParseError(std::string source, uint64_t line, const std::string& message)
      : Error(source + ":" + std::to_string(line) + ": " + message),
        source_(std::move(source)),
        line_(line),
        message_(message) {}
  const std::string& source() const { return source_; }
  uint64_t line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::string source_;
  uint64_t line_;
  std::string message_;
};

// A model file that is damaged, foreign or of another format version.
class ModelFormatError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// Input data that is damaged past parsing (truncated or corrupt gzip): by default a counted warning and the
// rest of that input is skipped; under --strict_parse an error.
class CorruptInputError : public IoError {
 public:
  using IoError::IoError;
};

}  // namespace lepus
