// Comparing secrets (keys, signatures) in a time that does not depend on where they differ,
// so that a caller cannot find a secret byte by byte by timing refusals.
#pragma once

#include <string_view>

namespace adapt {

// Whether `a` and `b` are equal; the time depends only on their lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace adapt
