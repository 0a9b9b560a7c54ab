#include "api/list_page.h"

#include <algorithm>

#include "api/request_parsing.h"

namespace adapt::api {

Result<PageRequest> PageRequestFromQuery(const HttpRequest& req,
                                         std::initializer_list<std::string_view> filters) {
  for (const auto& [name, _] : req.query) {
    if (name == "limit" || name == "cursor") continue;
    if (std::find(filters.begin(), filters.end(), name) == filters.end())
      return InvalidArgument(name, "unknown query parameter " + name);
  }
  PageRequest page;
  ASSIGN_OR_RETURN(page.limit, QueryInt(req, "limit", kDefaultPageLimit));
  RETURN_IF_ERROR(CheckPageLimit(page.limit));
  if (auto it = req.query.find("cursor"); it != req.query.end()) page.cursor = it->second;
  return page;
}

nlohmann::json NextCursorJson(const std::optional<std::string>& next_cursor) {
  return next_cursor ? nlohmann::json(*next_cursor) : nlohmann::json(nullptr);
}

}  // namespace adapt::api
