// Errors as values. Every failure that user input can cause comes back as an Error naming the
// field (a path into the user's input), what was wanted and what was got, and how to fix it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gpuplan {

enum class ErrorCode {
  kInvalidArgument,  // a value out of range or of the wrong type
  kNotFound,         // an unknown name (model, GPU, instance, file)
  kParse,            // malformed file contents (CSV, JSON, YAML, safetensors)
  kIo,               // a file that cannot be read or written
  kUnsupported,      // valid input that this version cannot handle yet
  kInternal,         // a bug: should never reach the user
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string field;    // e.g. "instances/aws.csv:42:price_on_demand" or "--gpus"
  std::string message;  // wanted vs got: "must be > 0, got -4"
  std::string hint;     // how to fix it; may be empty
  // One line for people: "--gpus: must be >= 1, got 0 (hint: ...)".
  std::string ToString() const;
};

// Holds a T or an Error. C++20 has no std::expected.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : e_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *e_; }

 private:
  std::optional<Error> e_;
};

// Inside a function returning Result<U> or Status: evaluates `expr` (a Result<T>), returns its
// Error on failure, else moves the value into `lhs`.
#define GPUPLAN_ASSIGN_OR_RETURN(lhs, expr)     \
  do {                                          \
    auto gpuplan_r_ = (expr);                   \
    if (!gpuplan_r_) return gpuplan_r_.error(); \
    lhs = std::move(*gpuplan_r_);               \
  } while (0)

// An Error. A range message states its own fix: without a hint, "must be in [1, 366], got 0"
// gets "use a value in [1, 366]" (and ">= 1", "at most 64", "a whole number in [1, 8]" alike).
Error MakeError(ErrorCode code, std::string field, std::string message, std::string hint = {});

}  // namespace gpuplan
