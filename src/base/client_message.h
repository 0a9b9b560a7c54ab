// What a client is told of a failed request. An internal failure's message is written for the
// operator: it can hold host paths, a tool's output or another tenant's ids. The client gets
// one fixed sentence with a reference instead; adaptd's log holds the message under it.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt {

// `status`'s message, or for an internal failure the fixed sentence with a new reference (the
// full message is logged with `where` and that reference).
std::string ClientMessage(const Status& status, const char* where = "request");

}  // namespace adapt
