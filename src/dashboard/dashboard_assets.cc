#include "dashboard/dashboard_assets.h"

namespace adapt::dashboard {

const EmbeddedAsset* FindAsset(std::string_view name) {
  for (const auto& asset : EmbeddedAssets()) {
    if (name == asset.name) return &asset;
  }
  return nullptr;
}

const char* ContentTypeFor(std::string_view name) {
  auto ends = [name](std::string_view ext) { return name.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

}  // namespace adapt::dashboard
