#include "base/background_work.h"

#include <cstdio>
#include <exception>

#include "base/log.h"

namespace adapt {

std::string DescribeCurrentException() noexcept {
  try {
    try {
      throw;
    } catch (const std::exception& e) {
      return std::string("internal error: ") + e.what();
    } catch (...) {
      return "internal error: an exception that is not a std::exception";
    }
  } catch (...) {
    return "internal error";  // the sentence could not be allocated; this one needs no heap
  }
}

void LogBackgroundFault(std::string_view work, std::string_view error,
                        std::string_view step) noexcept {
  std::string_view sep = step.empty() ? "" : ": ";
  try {
    spdlog::error("{}: {}{}{}", work, step, sep, error);
  } catch (...) {
    // The logger failed too (out of memory): stderr, which needs no allocation.
    std::fprintf(stderr, "%.*s: %.*s%.*s%.*s\n", static_cast<int>(work.size()), work.data(),
                 static_cast<int>(step.size()), step.data(), static_cast<int>(sep.size()),
                 sep.data(), static_cast<int>(error.size()), error.data());
  }
}

}  // namespace adapt
