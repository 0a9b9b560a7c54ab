// The dashboard's files (web/dist, built from web/src and committed), compiled into adaptd by
// embed_assets.cmake so that the dashboard needs neither npm nor a CDN at run time.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace adapt::dashboard {

struct EmbeddedAsset {
  const char* name;  // file name in web/dist, e.g. "app.js"
  const unsigned char* data;
  size_t size;
  const char* sha256;         // lower-case hex of the content: the ETag
  const unsigned char* gzip;  // the content gzip-compressed (at build time)
  size_t gzip_size;
};

// Every file of web/dist, sorted by name. Defined in the generated dashboard_assets_data.cc.
const std::vector<EmbeddedAsset>& EmbeddedAssets();
// The file named `name`, or nullptr.
const EmbeddedAsset* FindAsset(std::string_view name);
// The Content-Type for a file name's extension; application/octet-stream when unknown.
const char* ContentTypeFor(std::string_view name);

}  // namespace adapt::dashboard
