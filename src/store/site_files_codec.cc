#include "store/site_files_codec.h"

#include <nlohmann/json.hpp>

namespace adapt::store {

using nlohmann::json;

std::string EncodeSiteFiles(const SiteFiles& files) {
  json out = json::object();
  for (const auto& [path, f] : files)
    out[path] = {
        {"blob", f.blob}, {"size", f.size}, {"type", f.content_type}, {"sha256", f.sha256}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

SiteFiles DecodeSiteFiles(const std::string& text) {
  SiteFiles out;
  json files = json::parse(text, nullptr, false);
  if (!files.is_object()) return out;
  for (const auto& [path, f] : files.items()) {
    if (!f.is_object()) continue;
    SiteFileRecord r;
    if (f.contains("blob") && f["blob"].is_string()) r.blob = f["blob"].get<std::string>();
    if (f.contains("size") && f["size"].is_number_unsigned()) r.size = f["size"].get<uint64_t>();
    if (f.contains("type") && f["type"].is_string())
      r.content_type = f["type"].get<std::string>();
    else
      r.content_type = "application/octet-stream";
    if (f.contains("sha256") && f["sha256"].is_string()) r.sha256 = f["sha256"].get<std::string>();
    out.emplace(path, std::move(r));
  }
  return out;
}

}  // namespace adapt::store
