// Deferred answers: a handler's DeferredResponse answers later, through a DeferredReplySlot,
// or expires at its deadline; no worker waits for it.
#include "api/http_connection_internal.h"
#include "api/http_response_fields.h"

namespace adapt::api {
namespace {

using error_code = boost::system::error_code;

}  // namespace

// No worker waits for the answer: the deadline is a timer on the strand.
void HttpConnection::AwaitDeferred(std::shared_ptr<DeferredResponse> deferred) {
  deferred_ = std::move(deferred);
  reply_slot_ = std::make_shared<DeferredReplySlot<HttpConnection>>(shared_from_this(), strand_);
  deferred_timer_.expires_at(deferred_->deadline());
  deferred_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (ec || !self->deferred_) return;
    RunLogged("DeferredResponse::Expire", [&] { self->deferred_->Expire(); });
  });
  bool started = false;
  RunLogged("DeferredResponse::Start", [&] {
    deferred_->Start([slot = reply_slot_](HttpResponse r) { slot->Reply(std::move(r)); });
    started = true;
  });
  if (!started) reply_slot_->Reply(ServerErrorResponse(500, "internal", "internal error"));
}

void HttpConnection::OnDeferredAnswer(HttpResponse response) {
  if (!deferred_) return;
  deferred_.reset();
  reply_slot_.reset();
  deferred_timer_.cancel();
  if (response.deferred) response = ServerErrorResponse(500, "internal", "internal error");
  OnHandled(std::move(response));
}

void HttpConnection::CancelDeferred() {
  if (!deferred_) return;
  reply_slot_->Close();
  reply_slot_.reset();
  deferred_timer_.cancel();
  auto deferred = std::move(deferred_);
  RunLogged("DeferredResponse::Cancel", [&] { deferred->Cancel(); });
}

}  // namespace adapt::api
