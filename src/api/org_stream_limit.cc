#include "api/org_stream_limit.h"

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
  ~CountedStream() override {
    std::lock_guard lock(state_->mu);
    auto it = state_->open.find(org_id_);
    if (it != state_->open.end() && --it->second == 0) state_->open.erase(it);
  }
  void Start(std::shared_ptr<StreamSink> sink) override { inner_->Start(std::move(sink)); }
  void Stop() override { inner_->Stop(); }

 private:
  std::shared_ptr<State> state_;
  std::string org_id_;
  std::shared_ptr<ResponseStream> inner_;
};

Result<HttpResponse> OrgStreamLimit::TryAdmit(const std::string& org_id, HttpResponse response) {
  if (!response.stream || response.content_type != "text/event-stream") return response;
  {
    std::lock_guard lock(state_->mu);
    size_t& open = state_->open[org_id];
    if (state_->per_org != 0 && open >= state_->per_org) {
      if (open == 0) state_->open.erase(org_id);
      return Status(Code::kResourceExhausted,
                    "the organization already holds " + std::to_string(open) +
                        " open event streams, the most it may (adaptd's --max-streams-per-org); "
                        "close one first");
    }
    ++open;
  }
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
