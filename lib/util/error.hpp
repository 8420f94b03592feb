#pragma once

#include <expected>
#include <string>
#include <utility>

namespace ctxkit {

// An expected failure: a message that names the object and the cause, ready to print after
// "<tool>: error: ". `kind` lets callers react to a class of failure without parsing text.
struct Error {
  enum class Kind { Generic, NotFound, Corrupt, ReadOnly, Busy, Invalid };
  std::string message;
  Kind kind = Kind::Generic;
};

template <class T>
using Result = std::expected<T, Error>;

// Builds the unexpected value of a Result.
inline std::unexpected<Error> fail(std::string message, Error::Kind kind = Error::Kind::Generic) {
  return std::unexpected(Error{std::move(message), kind});
}

}  // namespace ctxkit

// Returns a failed Result's error from the calling function, as ccache's TRY does:
//   CTXKIT_TRY(util::write_file_atomic(path, text, 0600));
// For a Result whose value the caller goes on with, the test stays written out.
#define CTXKIT_TRY(...)                                               \
  do {                                                                \
    if (auto ctxkit_try_result_ = (__VA_ARGS__); !ctxkit_try_result_) \
      return std::unexpected(std::move(ctxkit_try_result_).error());  \
  } while (false)
