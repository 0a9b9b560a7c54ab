#include "store/sqlite_failure.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

namespace adapt::store {

Status SqliteFailure(const std::string& what, const std::exception& e) {
  if (const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&e);
      sqlite && sqlite->getErrorCode() == SQLITE_FULL)
    return Status(
        Code::kUnavailable,
        what + ": the server's disk is full; nothing was changed, retry once it has room");
  return Internal(what + ": " + e.what());
}

}  // namespace adapt::store
