// API.md's list contract at the edge: `?limit=&cursor=` into a PageRequest, and a Page into
// {"items": [...], "nextCursor": "..." | null}. The core validates and pages
// (base/list_cursor.h); this only translates.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/http_types.h"
#include "base/list_cursor.h"
#include "base/status.h"

namespace adapt::api {

// `limit` (an integer, 1..200, 50 when absent) and `cursor` from the query; a query parameter
// that is neither and not one of `filters` is a 400 (a misspelt filter must not list all).
Result<PageRequest> PageRequestFromQuery(const HttpRequest& req,
                                         std::initializer_list<std::string_view> filters = {});

nlohmann::json NextCursorJson(const std::optional<std::string>& next_cursor);

template <typename T, typename ToJson>
nlohmann::json PageJson(const Page<T>& page, ToJson&& to_json) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : page.items) items.push_back(to_json(item));
  return {{"items", std::move(items)}, {"nextCursor", NextCursorJson(page.next_cursor)}};
}

}  // namespace adapt::api
