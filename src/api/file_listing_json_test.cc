// A listing written as text is byte for byte the JSON its tree of values gives through
// JsonResponse, for names and link targets that reach every escaping rule.
#include "api/file_listing_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "api/errors.h"

namespace adapt::api {
namespace {

std::string TreeText(const core::FileListing& listing) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& e : listing.items) {
    nlohmann::json v = {
        {"name", e.name}, {"type", e.type}, {"size", e.size}, {"mode", e.mode}, {"mtime", e.mtime}};
    if (e.link_target) v["linkTarget"] = *e.link_target;
    items.push_back(std::move(v));
  }
  return JsonResponse(200, {{"path", listing.path}, {"items", std::move(items)}}).body;
}

TEST(FileListingJson, IsWhatTheTreeOfValuesGives) {
  const std::vector<std::string> texts = {"",          "a.txt",       "a\"b",     "back\\slash",
                                          "tab\there", "\x01\x1f",    "del\x7f",  "caf\xc3\xa9",
                                          "bad\xff",   "cut\xe2\x82", "</script>"};
  core::FileListing listing;
  listing.path = "/workspace/d\xff";
  EXPECT_EQ(FileListingJsonText(listing), TreeText(listing));
  int64_t power = 1;  // 7^i: sizes of many digits, negative ones and the largest
  for (const auto& t : texts) {
    core::FileEntry e;
    e.name = t;
    e.type = "file";
    e.size = -power;
    e.mode = "0644";
    e.mtime = "2026-12-06T00:00:00Z";
    listing.items.push_back(e);
    e.type = "symlink";
    e.link_target = t + "/target";
    e.size = INT64_MAX - power + 1;
    listing.items.push_back(e);
    power *= 7;
  }
  EXPECT_EQ(FileListingJsonText(listing), TreeText(listing));
}

}  // namespace
}  // namespace adapt::api
