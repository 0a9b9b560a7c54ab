// Matching that ignores case beyond ASCII (seed 001's list query: "part of a sandbox's name,
// ignoring case"), so that "ωmega" finds "Ωmega" as "omega" finds "Omega".
#pragma once

#include <string>
#include <string_view>

namespace adapt {

// `text` (UTF-8) with every letter in lower case, by the C.UTF-8 locale's simple (one to one)
// mapping. Bytes that are not valid UTF-8 are kept as they are.
std::string FoldCase(std::string_view text);

}  // namespace adapt
