// Money as integer nano-units (1e-9 of the operator's currency unit): the one codec between
// that integer and the decimal text people read and type ("12.5"). No floating point.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace adapt {

// "12.50", "-0.000000001", "0.00": at least two decimals, trailing zeros beyond them dropped.
std::string FormatNanoAmount(int64_t nanos);
// "10", "10.5", "0.000000001" (a leading '-' when `allow_negative`): at most 9 decimals and
// within int64; InvalidArgument naming `field` otherwise.
Result<int64_t> ParseNanoAmount(std::string_view text, const std::string& field,
                                bool allow_negative = false);

}  // namespace adapt
