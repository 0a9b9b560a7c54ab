#include "api/org_stream_limit.h"

#include <algorithm>
#include <utility>

#include "api/errors.h"

namespace adapt::api {

// The admitted stream, unchanged, with its place in the count given back when the connection
// drops it (after Stop, or without Start when the client left before the header went out).
class OrgStreamLimit::CountedStream : public ResponseStream {
 public:
  CountedStream(std::shared_ptr<void> place, std::shared_ptr<ResponseStream> inner)
      : place_(std::move(place)), inner_(std::move(inner)) {}
  void Start(std::shared_ptr<StreamSink> sink) override { inner_->Start(std::move(sink)); }
  void Stop() override { inner_->Stop(); }

 private:
  std::shared_ptr<void> place_;  // given back with this
  std::shared_ptr<ResponseStream> inner_;
};

// A request held open until its answer (a command's end, a sandbox settling), counted like a
// stream until the connection lets it go; or, past the cap, held not at all: its deadline is
// now, so it answers at once what it answers when its waitSeconds pass. Its work started
// before the wait (a command runs), so refusing the answer would hide work that was done.
class OrgStreamLimit::CountedWait : public DeferredResponse {
 public:
  // `place`: null when the cap was reached (the wait is not held).
  CountedWait(std::shared_ptr<void> place, std::shared_ptr<DeferredResponse> inner)
      : place_(std::move(place)),
        inner_(std::move(inner)),
        deadline_(place_ ? inner_->deadline()
                         : std::min(inner_->deadline(), std::chrono::steady_clock::now())) {}
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void Start(Reply reply) override { inner_->Start(std::move(reply)); }
  void Expire() override { inner_->Expire(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  std::shared_ptr<void> place_;
  std::shared_ptr<DeferredResponse> inner_;
  const std::chrono::steady_clock::time_point deadline_;
};

Result<HttpResponse> OrgStreamLimit::TryAdmit(const std::string& org_id, HttpResponse response) {
  if (response.deferred) {
    response.deferred =
        std::make_shared<CountedWait>(counter_.TryTake(org_id), std::move(response.deferred));
    return response;
  }
  if (!response.stream) return response;
  std::shared_ptr<void> place = counter_.TryTake(org_id);
  if (!place)
    return Status(Code::kResourceExhausted,
                  "the organization already holds " + std::to_string(counter_.per_org()) +
                      " open streams (event streams and downloads) and waiting requests, the "
                      "most it may (adaptd's --max-streams-per-org); close one first");
  response.stream = std::make_shared<CountedStream>(std::move(place), std::move(response.stream));
  return response;
}

HttpResponse OrgStreamLimit::Admit(const std::string& org_id, HttpResponse response) {
  auto admitted = TryAdmit(org_id, std::move(response));
  if (!admitted.ok()) return ErrorResponse(admitted.status());
  return std::move(*admitted);
}

size_t OrgStreamLimit::Open(const std::string& org_id) const { return counter_.Held(org_id); }

}  // namespace adapt::api
