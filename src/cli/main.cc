// adapt: the command-line client of adaptd. All the work is in RunAdapt (cli_app.h).
#include <curl/curl.h>

#include <iostream>

#include "cli/cli_app.h"

int main(int argc, char** argv) {
  // Global init before any thread exists, as libcurl requires.
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int exit_code = adapt::cli::RunAdapt(std::vector<std::string>(argv + 1, argv + argc), std::cin,
                                       std::cout, std::cerr);
  curl_global_cleanup();
  return exit_code;
}
