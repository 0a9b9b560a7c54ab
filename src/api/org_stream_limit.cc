#include "api/org_stream_limit.h"

#include <algorithm>
#include <utility>

#include "api/errors.h"

namespace adapt::api {

// The admitted stream, unchanged, with its place in the count given back when the connection
// drops it (after Stop, or without Start when the client left before the header went out).
class OrgStreamLimit::CountedStream : public ResponseStream {
 public:
  CountedStream(std::shared_ptr<State> state, std::string org_id,
                std::shared_ptr<ResponseStream> inner)
      : state_(std::move(state)), org_id_(std::move(org_id)), inner_(std::move(inner)) {}
  ~CountedStream() override { state_->Release(org_id_); }
  void Start(std::shared_ptr<StreamSink> sink) override { inner_->Start(std::move(sink)); }
  void Stop() override { inner_->Stop(); }

 private:
  std::shared_ptr<State> state_;
  std::string org_id_;
  std::shared_ptr<ResponseStream> inner_;
};

// A request held open until its answer (a command's end, a sandbox settling), counted like a
// stream until the connection lets it go; or, past the cap, held not at all: its deadline is
// now, so it answers at once what it answers when its waitSeconds pass. Its work started
// before the wait (a command runs), so refusing the answer would hide work that was done.
class OrgStreamLimit::CountedWait : public DeferredResponse {
 public:
  CountedWait(std::shared_ptr<State> state, std::string org_id,
              std::shared_ptr<DeferredResponse> inner, bool counted)
      : state_(std::move(state)),
        org_id_(std::move(org_id)),
        inner_(std::move(inner)),
        counted_(counted),
        deadline_(counted ? inner_->deadline()
                          : std::min(inner_->deadline(), std::chrono::steady_clock::now())) {}
  ~CountedWait() override {
    if (counted_) state_->Release(org_id_);
  }
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void Start(Reply reply) override { inner_->Start(std::move(reply)); }
  void Expire() override { inner_->Expire(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  std::shared_ptr<State> state_;
  std::string org_id_;
  std::shared_ptr<DeferredResponse> inner_;
  const bool counted_;
  const std::chrono::steady_clock::time_point deadline_;
};

bool OrgStreamLimit::State::Take(const std::string& org_id, size_t& held) {
  std::lock_guard lock(mu);
  size_t& n = open[org_id];
  held = n;
  if (per_org != 0 && n >= per_org) {
    if (n == 0) open.erase(org_id);
    return false;
  }
  ++n;
  return true;
}

void OrgStreamLimit::State::Release(const std::string& org_id) {
  std::lock_guard lock(mu);
  auto it = open.find(org_id);
  if (it != open.end() && --it->second == 0) open.erase(it);
}

Result<HttpResponse> OrgStreamLimit::TryAdmit(const std::string& org_id, HttpResponse response) {
  size_t held = 0;
  if (response.deferred) {
    const bool counted = state_->Take(org_id, held);
    response.deferred =
        std::make_shared<CountedWait>(state_, org_id, std::move(response.deferred), counted);
    return response;
  }
  if (!response.stream || response.content_type != "text/event-stream") return response;
  if (!state_->Take(org_id, held))
    return Status(Code::kResourceExhausted,
                  "the organization already holds " + std::to_string(held) +
                      " open event streams and waiting requests, the most it may (adaptd's "
                      "--max-streams-per-org); close one first");
  response.stream = std::make_shared<CountedStream>(state_, org_id, std::move(response.stream));
  return response;
}

HttpResponse OrgStreamLimit::Admit(const std::string& org_id, HttpResponse response) {
  auto admitted = TryAdmit(org_id, std::move(response));
  if (!admitted.ok()) return ErrorResponse(admitted.status());
  return std::move(*admitted);
}

size_t OrgStreamLimit::Open(const std::string& org_id) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->open.find(org_id);
  return it == state_->open.end() ? 0 : it->second;
}

}  // namespace adapt::api
