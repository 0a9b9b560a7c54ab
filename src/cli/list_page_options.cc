#include "cli/list_page_options.h"

#include "cli/api_client.h"

namespace adapt::cli {

std::shared_ptr<ListPageOptions> AddListPageOptions(CLI::App& list) {
  auto page = std::make_shared<ListPageOptions>();
  list.add_option("--limit", page->limit, "page size, 1-200 (default 50)");
  list.add_option("--cursor", page->cursor, "nextCursor of the previous page");
  return page;
}

std::string ListPagePath(const std::string& path, const ListPageOptions& page,
                         std::vector<std::pair<std::string, std::string>> filters) {
  filters.emplace_back("limit", page.limit);
  filters.emplace_back("cursor", page.cursor);
  return path + QueryString(filters);
}

}  // namespace adapt::cli
