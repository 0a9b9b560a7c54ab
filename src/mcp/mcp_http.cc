#include "mcp/mcp_http.h"

#include <boost/asio/post.hpp>

#include "api/bearer_credential.h"
#include "base/background_work.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "mcp/cors.h"

namespace adapt::mcp {
namespace {

using api::HttpRequest;
using api::HttpResponse;
using nlohmann::json;

HttpResponse JsonRpcResponse(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

HttpResponse Refuse(int status, const std::string& message) {
  return JsonRpcResponse(status, RpcError(nullptr, rpc::kInvalidRequest, message));
}

HttpResponse Accepted() {
  HttpResponse r;
  r.status = 202;
  r.content_type.clear();
  return r;
}

std::string SseFrame(const json& message) {
  return "event: message\ndata: " + message.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

// A call past McpHttp's bound is refused at once; a few seconds later one has likely ended.
constexpr int kRetryAfterSeconds = 2;
// A deferred call answers by then at the latest (tools wait at most about a minute).
constexpr auto kCallDeadline = std::chrono::minutes(10);

// Counts one running call until it is released: when its answer is given or it parks (a tool
// that waits), whichever comes first, and at the latest when it goes. Released before the
// answer is sent, so a client that gets its answer finds the slot free for its next call.
class CallSlot {
 public:
  explicit CallSlot(std::shared_ptr<std::atomic<int>> running) : running_(std::move(running)) {}
  ~CallSlot() { Release(); }
  CallSlot(const CallSlot&) = delete;
  CallSlot& operator=(const CallSlot&) = delete;

  void Release() {
    if (!released_.exchange(true)) running_->fetch_sub(1);
  }

 private:
  std::shared_ptr<std::atomic<int>> running_;
  std::atomic<bool> released_{false};
};

// Runs one call: calls its second argument once with the JSON-RPC answer, before returning or
// later (a tool that waits).
using CallRun = std::function<void(ToolContext&, std::function<void(json)>)>;

// One call answered as plain JSON once it ran on the calls pool. A tool that waits gives its
// pool thread (and its slot) back when it parks, and answers when its wait ends.
class DeferredCall : public api::DeferredResponse,
                     public std::enable_shared_from_this<DeferredCall> {
 public:
  DeferredCall(CallRun run, ToolContext ctx, std::shared_ptr<CallSlot> slot,
               boost::asio::thread_pool& calls)
      : run_(std::move(run)), ctx_(std::move(ctx)), slot_(std::move(slot)), calls_(calls) {}

  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void Start(Reply reply) override {
    reply_ = std::move(reply);
    auto self = shared_from_this();
    boost::asio::post(
        calls_, Guarded(
                    "MCP call",
                    [self] {
                      self->run_(self->ctx_, [self](json answer) {
                        self->slot_->Release();
                        self->Finish(JsonRpcResponse(200, answer));
                      });
                      self->slot_->Release();
                    },
                    [self](const std::string&) {
                      self->slot_->Release();
                      self->Finish(JsonRpcResponse(500, RpcError(nullptr, rpc::kInternalError,
                                                                 "the call failed unexpectedly")));
                    }));
  }
  void Expire() override {
    Finish(JsonRpcResponse(504, RpcError(nullptr, rpc::kInternalError, "the call took too long")));
  }
  // The server stops: the call runs on, and its answer goes nowhere.
  void Cancel() override {}

 private:
  void Finish(HttpResponse r) {
    if (!answered_.exchange(true)) reply_(std::move(r));
  }

  CallRun run_;
  ToolContext ctx_;
  std::shared_ptr<CallSlot> slot_;
  boost::asio::thread_pool& calls_;
  const std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::now() + kCallDeadline;
  Reply reply_;
  std::atomic<bool> answered_{false};
};

// One tools/call answered as an SSE stream: progress notifications, then the result.
class CallStream : public api::ResponseStream, public std::enable_shared_from_this<CallStream> {
 public:
  CallStream(CallRun run, ToolContext ctx, json token, std::shared_ptr<CallSlot> slot,
             boost::asio::thread_pool& calls)
      : run_(std::move(run)),
        ctx_(std::move(ctx)),
        token_(std::move(token)),
        slot_(std::move(slot)),
        calls_(calls) {}

  void Start(std::shared_ptr<api::StreamSink> sink) override {
    boost::asio::post(
        calls_, Guarded(
                    "MCP call stream",
                    [self = shared_from_this(), sink] {
                      self->ctx_.progress = [sink, token = self->token_](
                                                double progress, std::optional<double> total,
                                                const std::string& message) {
                        json params = {
                            {"progressToken", token}, {"progress", progress}, {"message", message}};
                        if (total) params["total"] = *total;
                        sink->Send(SseFrame(RpcNotification("notifications/progress", params)));
                      };
                      self->run_(self->ctx_, [self, sink](json answer) {
                        self->slot_->Release();
                        sink->Send(SseFrame(answer));
                        sink->Close();
                      });
                      self->slot_->Release();
                    },
                    [self = shared_from_this(), sink](const std::string&) {
                      self->slot_->Release();
                      sink->Close();
                    }));
  }
  // A dropped connection is not a cancellation (the spec says so): the call runs on.
  void Stop() override {}

 private:
  CallRun run_;
  ToolContext ctx_;
  json token_;
  std::shared_ptr<CallSlot> slot_;
  boost::asio::thread_pool& calls_;
};

// Gives the answer of a deferred call the CORS headers too.
class CorsDeferred : public api::DeferredResponse {
 public:
  CorsDeferred(std::shared_ptr<api::DeferredResponse> inner, std::string origin)
      : inner_(std::move(inner)), origin_(std::move(origin)) {}
  std::chrono::steady_clock::time_point deadline() const override { return inner_->deadline(); }
  void Start(Reply reply) override {
    inner_->Start([reply = std::move(reply), origin = origin_](HttpResponse r) {
      HttpRequest req;
      req.headers["origin"] = origin;
      AddMcpCorsHeaders(req, r);
      reply(std::move(r));
    });
  }
  void Expire() override { inner_->Expire(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  std::shared_ptr<api::DeferredResponse> inner_;
  std::string origin_;
};

}  // namespace

McpHttp::McpHttp(const ToolRegistry& tools, Authenticator authenticate, std::string listen_host,
                 boost::asio::thread_pool& calls, int max_calls)
    : server_(tools),
      authenticate_(std::move(authenticate)),
      origins_(std::move(listen_host)),
      calls_(calls),
      max_calls_(max_calls) {}

std::string McpHttp::BaseUrl(const HttpRequest& req) {
  // Behind a TLS-terminating proxy the client used https; the proxy says so.
  std::string scheme = req.Header("x-forwarded-proto") == "https" ? "https" : "http";
  std::string host = req.Header("host");
  return scheme + "://" + (host.empty() ? std::string("localhost") : host);
}

HttpResponse McpHttp::Unauthorized(const HttpRequest& req, const std::string& why) {
  HttpResponse r = Refuse(401, why);
  std::string challenge =
      "Bearer resource_metadata=\"" + BaseUrl(req) + "/.well-known/oauth-protected-resource/mcp\"";
  if (!api::BearerKey(req).empty()) challenge += ", error=\"invalid_token\"";
  r.headers.emplace_back("WWW-Authenticate", challenge);
  return r;
}

std::optional<HttpResponse> McpHttp::Admit(const HttpRequest& req, core::Principal& who) {
  if (std::string problem = origins_.Problem(req.Header("host"), req.Header("origin"));
      !problem.empty())
    return Refuse(403, problem);
  std::string bearer = api::BearerKey(req);
  if (bearer.empty()) return Unauthorized(req, "an API key or an OAuth access token is required");
  auto principal = authenticate_(bearer);
  if (!principal.ok()) return Unauthorized(req, "the bearer token is not valid");
  who = *principal;
  return std::nullopt;
}

HttpResponse McpHttp::Post(const HttpRequest& req) {
  core::Principal who;
  if (auto refused = Admit(req, who)) return *refused;
  auto value = ParseJson(req.body, "the body");
  if (!value.ok())
    return JsonRpcResponse(400, RpcError(nullptr, rpc::kParseError, value.status().message()));
  Message m = Classify(*value);
  if (m.kind == MessageKind::kInvalid)
    return JsonRpcResponse(400, RpcError(m.id, rpc::kInvalidRequest, m.problem));

  if (m.kind == MessageKind::kRequest && m.method == "initialize") {
    std::string version;
    json answer = server_.Initialize(m, version);
    if (answer.contains("error")) return JsonRpcResponse(400, answer);
    HttpResponse r = JsonRpcResponse(200, answer);
    r.headers.emplace_back("Mcp-Session-Id", sessions_.Create(who.org_id, version));
    return r;
  }

  std::string header_version = req.Header("mcp-protocol-version");
  if (!header_version.empty() && !SupportsProtocolVersion(header_version))
    return Refuse(400, "unsupported MCP-Protocol-Version " + header_version);
  std::string session_id = req.Header("mcp-session-id");
  if (session_id.empty()) return Refuse(400, "Mcp-Session-Id header is required; initialize first");
  std::optional<std::string> session_version = sessions_.Touch(session_id, who.org_id);
  if (!session_version)
    return Refuse(404, "the session is unknown or has expired; initialize a new one");

  if (m.kind == MessageKind::kNotification) {
    if (m.method == "notifications/cancelled" && m.params.contains("requestId"))
      sessions_.Cancel(session_id, m.params["requestId"].dump(
                                       -1, ' ', false, nlohmann::json::error_handler_t::replace));
    return Accepted();
  }
  if (m.kind == MessageKind::kResponse) return Accepted();
  return Call(m, session_id, *session_version, who);
}

HttpResponse McpHttp::Call(const Message& request, const std::string& session_id,
                           const std::string& protocol_version, const core::Principal& who) {
  ToolContext ctx;
  ctx.who = who;
  ctx.protocol_version = protocol_version;
  std::string key = request.id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Registered when the work starts, so a stream whose client left before it began leaves
  // nothing behind in the session.
  CallRun run = [this, request, session_id, key](ToolContext& c, std::function<void(json)> done) {
    c.cancelled = sessions_.BeginCall(session_id, key);
    server_.Answer(request, c,
                   [this, session_id, key, id = request.id, cancelled = c.cancelled,
                    done = std::move(done)](json answer) {
                     sessions_.EndCall(session_id, key);
                     if (cancelled->IsSet())
                       answer = RpcError(id, rpc::kRequestCancelled, "request cancelled");
                     done(std::move(answer));
                   });
  };
  if (running_->fetch_add(1) >= max_calls_) {
    running_->fetch_sub(1);
    HttpResponse r = JsonRpcResponse(
        429, RpcError(request.id, rpc::kInternalError,
                      "too many MCP tool calls are running on this server (" +
                          std::to_string(max_calls_) + "); retry in a few seconds"));
    r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterSeconds));
    return r;
  }
  auto slot = std::make_shared<CallSlot>(running_);
  json token = ProgressToken(request);
  HttpResponse r;
  if (request.method == "tools/call" && !token.is_null()) {
    r.content_type = "text/event-stream";
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.stream = std::make_shared<CallStream>(run, std::move(ctx), token, std::move(slot), calls_);
    if (!admit_stream_) return r;
    // Refused here, the stream is never started, so the tool never runs and its slot is free.
    auto admitted = admit_stream_(who.org_id, std::move(r));
    if (admitted.ok()) return std::move(*admitted);
    return JsonRpcResponse(429,
                           RpcError(request.id, rpc::kInternalError, admitted.status().message()));
  }
  r.deferred = std::make_shared<DeferredCall>(run, std::move(ctx), std::move(slot), calls_);
  return r;
}

std::optional<HttpResponse> OversizedMcpBody(std::string_view path, size_t max_body_bytes) {
  if (path != "/mcp") return std::nullopt;
  return Refuse(413, "the request body exceeds " + std::to_string(max_body_bytes) +
                         " bytes; send a smaller JSON-RPC message");
}

HttpResponse McpHttp::Delete(const HttpRequest& req) {
  core::Principal who;
  if (auto refused = Admit(req, who)) return *refused;
  std::string session_id = req.Header("mcp-session-id");
  if (session_id.empty()) return Refuse(400, "Mcp-Session-Id header is required");
  if (!sessions_.End(session_id, who.org_id))
    return Refuse(404, "the session is unknown or has expired");
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  return r;
}

HttpRoutes McpRoutes(McpHttp& mcp) {
  HttpRoutes routes;
  routes.push_back({"POST", "/mcp", [&mcp](const HttpRequest& req) {
                      HttpResponse r = mcp.Post(req);
                      if (r.deferred && !req.Header("origin").empty())
                        r.deferred = std::make_shared<CorsDeferred>(std::move(r.deferred),
                                                                    req.Header("origin"));
                      AddMcpCorsHeaders(req, r);
                      return r;
                    }});
  routes.push_back({"DELETE", "/mcp", [&mcp](const HttpRequest& req) {
                      HttpResponse r = mcp.Delete(req);
                      AddMcpCorsHeaders(req, r);
                      return r;
                    }});
  return routes;
}

}  // namespace adapt::mcp
