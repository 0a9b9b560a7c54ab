// What a client is told of a failed request. An internal failure's message is written for the
// operator: it can hold host paths, a tool's output or another tenant's ids. The client gets
// one fixed sentence with a reference instead; adaptd's log holds the message under it.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace adapt {

// `status`'s message; for an internal failure the fixed sentence with a new reference, and for
// a failure whose message names the host's resources its client sentence with a new reference
// (either way the full message is logged with `where` and that reference). Used for every
// sentence a tenant reads: a response's error and the failures recorded on its sandboxes,
// commands, runs and operations.
std::string ClientMessage(const Status& status, const char* where = "request");

// The sentence recorded on a tenant's own sandbox, command, run or operation for a failure of
// its work: its client sentence with a new reference when its message names the host's
// resources (the message logged as ClientMessage does), else its message. An internal
// failure's message is kept here, unlike in a response: it says what happened to that work (a
// checkpoint refused for a connected TCP endpoint, a startup command that was not found);
// unless it holds a path under one of the host directories below, when the tenant reads a
// fixed sentence with a reference instead.
std::string RecordMessage(const Status& status, const char* where = "recorded failure");

// The host's directories (adaptd's state and images directories) whose paths a recorded
// message must never show a tenant. Set at start-up; replaces the previous set.
void SetHostDirectoriesForMessages(std::vector<std::string> directories);

}  // namespace adapt
