// The whole `adapt` command line as one call, so tests can drive it without a process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace adapt::cli {

// Parses `args` (without the program name), runs the command against adaptd, and returns
// the exit status: 0 on success (and for --help), 2 for a usage error, 1 when the request
// fails (transport error or HTTP >= 400). Every failure prints exactly one line to `err`,
// "adapt: <message>". Reads `in` only for `--data -`.
int RunAdapt(std::vector<std::string> args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace adapt::cli
