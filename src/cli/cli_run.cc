#include "cli/cli_run.h"

#include <sstream>

#include "cli/cli_app.h"

namespace adapt::cli::testing {

Outcome RunCli(const std::string& url, const std::vector<std::string>& args,
               const std::string& in) {
  std::vector<std::string> full = {"--url", url, "--api-key", "adapt_test"};
  full.insert(full.end(), args.begin(), args.end());
  std::istringstream input(in);
  std::ostringstream out, err;
  int code = RunAdapt(full, input, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace adapt::cli::testing
