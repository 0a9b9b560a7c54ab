#include "api/file_listing_json.h"

#include "api/json_text.h"

namespace adapt::api {

std::string FileListingJsonText(const core::FileListing& listing) {
  // Keys in sorted order, as nlohmann keeps them (api/json_text.h).
  JsonText j;
  j.BeginObject();
  j.Key("items");
  j.BeginArray();
  for (const auto& e : listing.items) {
    j.BeginObject();
    if (e.link_target) {
      j.Key("linkTarget");
      j.String(*e.link_target);
    }
    j.Key("mode");
    j.String(e.mode);
    j.Key("mtime");
    j.String(e.mtime);
    j.Key("name");
    j.String(e.name);
    j.Key("size");
    j.Int(e.size);
    j.Key("type");
    j.String(e.type);
    j.EndObject();
  }
  j.EndArray();
  j.Key("path");
  j.String(listing.path);
  j.EndObject();
  return j.Take();
}

}  // namespace adapt::api
