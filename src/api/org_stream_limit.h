// How many event streams (text/event-stream responses: status events, command and startup
// output) one organization holds open at once. They are meant to stay open, so without a cap
// one tenant could hold every connection the API listener takes (--max-connections) from a
// handful of addresses, and every other client would be refused meanwhile. Past the cap a new
// stream is a 429 naming it; the organization's open streams are untouched.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "api/http_types.h"
#include "base/status.h"

namespace adapt::api {

class OrgStreamLimit {
 public:
  // 0: no limit.
  explicit OrgStreamLimit(size_t per_org) : state_(std::make_shared<State>(per_org)) {}

  // `response` as it is when it is not an event stream; an event stream counted for `org_id`
  // until the connection lets it go; or a 429 (the stream is never started) when the
  // organization already holds `per_org` of them.
  HttpResponse Admit(const std::string& org_id, HttpResponse response);
  // The same, with the refusal as its Status (ResourceExhausted) for callers that answer in
  // another shape (MCP's JSON-RPC).
  Result<HttpResponse> TryAdmit(const std::string& org_id, HttpResponse response);

  // How many event streams `org_id` holds now.
  size_t Open(const std::string& org_id) const;

 private:
  struct State {
    explicit State(size_t per_org) : per_org(per_org) {}
    const size_t per_org;
    mutable std::mutex mu;
    std::map<std::string, size_t> open;  // guarded by mu; no entry for an organization at 0
  };
  class CountedStream;

  std::shared_ptr<State> state_;  // shared with each counted stream, which may outlive this
};

}  // namespace adapt::api
