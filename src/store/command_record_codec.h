// How the SQLite store encodes a command's JSON column (`data`): the keys rows have always had,
// so that databases written before the typed record read back the same (and the other way).
// The columns the store queries on (id, org, sandbox, status, created_at) are not read from
// it. Internal to store/.
#pragma once

#include <string>

#include "store/records.h"

namespace adapt::store {

std::string EncodeCommandData(const CommandRecord& c);
// Fills the fields of `c` that the JSON column holds; text that is not a JSON object leaves
// them at their defaults (a damaged row still lists).
void DecodeCommandData(const std::string& text, CommandRecord& c);

}  // namespace adapt::store
