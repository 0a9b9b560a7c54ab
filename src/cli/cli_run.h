// Runs the whole `adapt` command line in-process against a given adaptd URL, for tests:
// what it printed and its exit code.
#pragma once

#include <string>
#include <vector>

namespace adapt::cli::testing {

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

// `adapt --url URL --api-key adapt_test ARGS...` with `in` as its standard input.
Outcome RunCli(const std::string& url, const std::vector<std::string>& args,
               const std::string& in = "");

}  // namespace adapt::cli::testing
