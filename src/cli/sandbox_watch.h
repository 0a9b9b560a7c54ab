// adapt sandbox list --watch: list, then follow the organization's event stream
// (GET /v1/events), one line per event, until interrupted.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"
#include "cli/commands.h"

namespace adapt::cli {

// Prints the list (what `print_list` prints) once the stream is open, so that no change
// between the list and the watch is missed, then a line per status event: "AT  ID  STATUS",
// or the event's JSON when `json`. When adaptd says the resume point is no longer kept (a
// `reset` event), the list is printed again. A dropped stream is opened again with
// Last-Event-ID; an HTTP error (401, 403), or no adaptd at the first try, ends the watch with
// that error.
Status WatchSandboxes(const ApiClient& client, const Console& console, bool json,
                      const std::function<Status()>& print_list);

// The line printed for one event's `data` (a JSON object), or "" for one that is not an
// event of ours. `event` is the SSE event name ("status", "reset").
std::string SandboxEventLine(const std::string& event, const std::string& data, bool json);

}  // namespace adapt::cli
