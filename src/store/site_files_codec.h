// How the SQLite store encodes a site release's `files` column: a JSON object from a path to
// {blob, size, type, sha256}, the shape rows have always had, so databases written before the
// typed record read back the same. Internal to store/.
#pragma once

#include <map>
#include <string>

#include "store/records.h"

namespace adapt::store {

using SiteFiles = std::map<std::string, SiteFileRecord>;

std::string EncodeSiteFiles(const SiteFiles& files);
// Text that is not a JSON object is no files; an entry that is not an object is skipped.
SiteFiles DecodeSiteFiles(const std::string& text);

}  // namespace adapt::store
