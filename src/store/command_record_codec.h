// How the SQLite store encodes a command's JSON column (`data`): the keys rows have always had,
// so that databases written before the typed record read back the same (and the other way),
// but for the output. The columns the store queries on (id, org, sandbox, status, created_at)
// are not read from it, and the output (stdout, stderr) has columns of its own since migration
// 38: a row written before keeps it here, and Decode reads it from here. Internal to store/.
#pragma once

#include <string>

#include "store/records.h"

namespace adapt::store {

std::string EncodeCommandData(const CommandRecord& c);
// Fills the fields of `c` that the JSON column holds (the output only from a row written
// before migration 38; else it is left empty); text that is not a JSON object leaves them at
// their defaults (a damaged row still lists).
void DecodeCommandData(const std::string& text, CommandRecord& c);

}  // namespace adapt::store
