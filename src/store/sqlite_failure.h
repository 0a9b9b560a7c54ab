// What a SQLite exception means to the caller of a store verb. A full disk is the server's
// condition, not a fault of adaptd: it is answered Unavailable with a sentence that says so,
// so that a client is told the server is out of room (and may retry) rather than given an
// internal error's reference. Anything else stays an internal failure with SQLite's words.
#pragma once

#include <exception>
#include <string>

#include "base/status.h"

namespace adapt::store {

// `what` ("creating sandbox") with the exception's meaning.
Status SqliteFailure(const std::string& what, const std::exception& e);

}  // namespace adapt::store
