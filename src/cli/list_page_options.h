// --limit and --cursor of a list command (API.md's list contract: one page, newest first),
// as `adapt sandbox list` has them.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace adapt::cli {

struct ListPageOptions {
  std::string limit;   // empty: the server's default (50)
  std::string cursor;  // empty: the first page
};

// Adds --limit and --cursor to `list`; the options are filled when it parses.
std::shared_ptr<ListPageOptions> AddListPageOptions(CLI::App& list);

// `path` with the page's query and `filters` (empty values left out).
std::string ListPagePath(const std::string& path, const ListPageOptions& page,
                         std::vector<std::pair<std::string, std::string>> filters = {});

}  // namespace adapt::cli
