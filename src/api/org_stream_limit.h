// How many responses one organization holds open at once: streams (status events, command and
// startup output, downloads of sandbox files, archives and objects: each holds a thread and,
// for a sandbox's file, a tool in the sandbox, for as long as its client takes to read) and
// waiting requests (a DeferredResponse: a command's end, a sandbox settling, up to their
// waitSeconds). They stay open, and a full
// listener evicts only connections waiting for a request head, so without a cap one tenant
// could hold every connection the API listener takes (--max-connections) from a handful of
// addresses, and every other client would be refused meanwhile. Past the cap a new stream is
// a 429 naming it, and a new wait is not held: it answers at once what it answers when its
// waitSeconds pass (its work, a command, has started already). What is open is untouched.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "base/org_counter.h"
#include "base/status.h"

namespace adapt::api {

class OrgStreamLimit {
 public:
  // 0: no limit. `total`: on all organizations' together (0: none), for a listener whose
  // clients need no key (the static sites' visitors), so that many organizations' counts
  // cannot together hold every thread.
  explicit OrgStreamLimit(size_t per_org, size_t total = 0) : counter_(per_org, total) {}

  // `response` as it is when it is neither a stream nor a wait; a stream or a wait counted
  // for `org_id` until the connection lets it go; past `per_org` of them, a 429
  // for a stream (it is never started) and a wait whose deadline is now.
  HttpResponse Admit(const std::string& org_id, HttpResponse response);
  // The same, with the refusal as its Status (ResourceExhausted) for callers that answer in
  // another shape (MCP's JSON-RPC).
  Result<HttpResponse> TryAdmit(const std::string& org_id, HttpResponse response);

  // How many streams and waits `org_id` holds now.
  size_t Open(const std::string& org_id) const;

 private:
  class CountedStream;
  class CountedWait;

  OrgCounter counter_;  // its count is shared with each counted stream, which may outlive this
};

}  // namespace adapt::api
