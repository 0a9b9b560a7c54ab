// adapt mcp: an MCP server on stdio for assistants that launch local processes. It reads
// newline-delimited JSON-RPC on stdin, forwards each message to adaptd's /mcp (Streamable
// HTTP) with the user's key, and writes only MCP messages to stdout, one per line; logs go
// to stderr. Requests run concurrently, so notifications/cancelled reaches a running call.
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cli/commands.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

// A line of stdin past this is not read into memory: answered -32600 and skipped to its end.
constexpr size_t kMaxLineBytes = 16 << 20;
// Calls forwarded at once; a line past them waits for one to end (stdin is read no further).
constexpr size_t kMaxCallsAtOnce = 64;

enum class LineRead { kLine, kTooLong, kEnd };

// The next line of `in` without its newline, at most kMaxLineBytes.
LineRead ReadLine(std::istream& in, std::string& line) {
  line.clear();
  bool too_long = false;
  for (int ch; (ch = in.get()) != std::char_traits<char>::eof();) {
    if (ch == '\n') return too_long ? LineRead::kTooLong : LineRead::kLine;
    if (line.size() < kMaxLineBytes) {
      line.push_back(static_cast<char>(ch));
    } else {
      too_long = true;
      line.clear();
      line.shrink_to_fit();
    }
  }
  if (too_long) return LineRead::kTooLong;
  return line.empty() ? LineRead::kEnd : LineRead::kLine;
}

// The method of a message; empty when it has none (or it is no object).
std::string MethodOf(const json& message) {
  if (!message.is_object()) return "";
  auto method = message.find("method");
  return method != message.end() && method->is_string() ? method->get<std::string>() : "";
}

struct Exchange {
  long status = 0;
  std::string content_type;
  std::string session_id;
  std::string body;
};

class StdioProxy {
 public:
  StdioProxy(ClientConfig config, std::ostream& out) : config_(std::move(config)), out_(out) {}

  Status Run(std::istream& in) {
    std::string line;
    struct Call {
      std::thread thread;
      std::shared_ptr<std::atomic<bool>> done;
    };
    std::list<Call> calls;
    // Joins the calls that ended; then waits while `most` or more still run.
    auto reap = [&calls](size_t most) {
      for (;;) {
        for (auto it = calls.begin(); it != calls.end();) {
          if (!*it->done) {
            ++it;
            continue;
          }
          it->thread.join();
          it = calls.erase(it);
        }
        if (calls.size() < most) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    };
    for (LineRead r; (r = ReadLine(in, line)) != LineRead::kEnd;) {
      if (r == LineRead::kTooLong) {
        Write({{"jsonrpc", "2.0"},
               {"id", nullptr},
               {"error",
                {{"code", -32600},
                 {"message", "the message is larger than 16 MiB; it was not sent"}}}});
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json message = json::parse(line, nullptr, false);
      if (message.is_discarded()) {
        Write({{"jsonrpc", "2.0"},
               {"id", nullptr},
               {"error", {{"code", -32700}, {"message", "the line is not valid JSON"}}}});
        continue;
      }
      // Valid JSON that is no single JSON-RPC object (a batch, a number) goes to adaptd too,
      // which judges every message (mcp/json_rpc.cc) and answers -32600 as it does over HTTP.
      std::string method = MethodOf(message);
      if (method == "initialize") {
        Forward(message);  // first, alone: later messages need its session id
        continue;
      }
      if (method == "notifications/cancelled" && message.contains("params") &&
          message["params"].is_object()) {
        std::lock_guard lock(mu_);
        cancelled_.insert(message["params"]
                              .value("requestId", json())
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      }
      // Each call's thread is joined once it ends (a thread per message, never joined, ran the
      // process out of threads after some 30,000 messages).
      reap(kMaxCallsAtOnce);
      auto done = std::make_shared<std::atomic<bool>>(false);
      calls.push_back({std::thread([this, message, done] {
                         Forward(message);
                         *done = true;
                       }),
                       done});
    }
    for (auto& c : calls) c.thread.join();
    EndSession();
    return Status::Ok();
  }

 private:
  void Write(const json& message) {
    std::lock_guard lock(mu_);
    if (message.contains("id") && !message.contains("method") &&
        cancelled_.count(
            message["id"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)))
      return;  // the client gave up on it
    out_ << message.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    out_.flush();
  }

  void WriteData(const std::string& data) {
    json message = json::parse(data, nullptr, false);
    if (!message.is_discarded()) Write(message);
  }

  static size_t OnHeader(char* data, size_t size, size_t n, void* self) {
    auto* ex = static_cast<std::pair<StdioProxy*, Exchange*>*>(self)->second;
    std::string h(data, size * n);
    auto colon = h.find(':');
    if (colon != std::string::npos) {
      std::string name = h.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = h.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
      if (name == "content-type") ex->content_type = value;
      if (name == "mcp-session-id") ex->session_id = value;
    }
    return size * n;
  }

  static size_t OnBody(char* data, size_t size, size_t n, void* self) {
    auto* pair = static_cast<std::pair<StdioProxy*, Exchange*>*>(self);
    Exchange* ex = pair->second;
    ex->body.append(data, size * n);
    if (ex->content_type.rfind("text/event-stream", 0) == 0) {
      // Emit each complete SSE event's data as soon as it arrives (progress before results).
      size_t end;
      while ((end = ex->body.find('\n')) != std::string::npos) {
        std::string line = ex->body.substr(0, end);
        ex->body.erase(0, end + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("data:", 0) == 0)
          pair->first->WriteData(line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5));
      }
    }
    return size * n;
  }

  Exchange Post(const std::string& method, const std::string& body) {
    Exchange ex;
    CURL* curl = curl_easy_init();
    if (!curl) return ex;
    struct curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json, text/event-stream");
    std::string auth = "Authorization: Bearer " + config_.api_key;
    if (!config_.api_key.empty()) headers = curl_slist_append(headers, auth.c_str());
    std::string session, version;
    {
      std::lock_guard lock(mu_);
      session = "Mcp-Session-Id: " + session_id_;
      version = "MCP-Protocol-Version: " + protocol_version_;
    }
    if (session.size() > 16) headers = curl_slist_append(headers, session.c_str());
    if (version.size() > 22) headers = curl_slist_append(headers, version.c_str());
    std::string url = config_.url + "/mcp";
    std::pair<StdioProxy*, Exchange*> self{this, &ex};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (method == "POST") {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &StdioProxy::OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &self);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &StdioProxy::OnBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &self);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(curl);
    if (rc == CURLE_OK)
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &ex.status);
    else
      std::cerr << "adapt mcp: cannot reach adaptd at " << url << ": " << curl_easy_strerror(rc)
                << std::endl;
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return ex;
  }

  void Forward(const json& message) {
    Exchange ex =
        Post("POST", message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    bool is_request = message.is_object() && message.contains("id") && message.contains("method");
    // adaptd refused the message itself (not a JSON-RPC message): its error is the answer.
    bool refused = !message.is_object() || ex.status == 400;
    if (MethodOf(message) == "initialize" && ex.status == 200) {
      json answer = json::parse(ex.body, nullptr, false);
      std::lock_guard lock(mu_);
      session_id_ = ex.session_id;
      if (!answer.is_discarded() && answer.contains("result"))
        protocol_version_ = answer["result"].value("protocolVersion", "");
    }
    if (ex.content_type.rfind("text/event-stream", 0) == 0) return;  // already written
    json answer = json::parse(ex.body, nullptr, false);
    if (!answer.is_discarded() && answer.is_object() && answer.contains("jsonrpc")) {
      if (is_request) {
        if (answer["id"].is_null()) answer["id"] = message["id"];
        Write(answer);
      } else if (refused && answer.contains("error")) {
        Write(answer);
      }
      if (ex.status >= 400)
        std::cerr << "adapt mcp: adaptd answered HTTP " << ex.status << ": " << ex.body
                  << std::endl;
      return;
    }
    if (ex.status >= 400 || ex.status == 0) {
      std::cerr << "adapt mcp: adaptd answered HTTP " << ex.status << ": " << ex.body << std::endl;
      if (is_request || !message.is_object())
        Write({{"jsonrpc", "2.0"},
               {"id", is_request ? message["id"] : json()},
               {"error",
                {{"code", -32603},
                 {"message", ex.status == 401
                                 ? "adaptd refused the API key (HTTP 401)"
                                 : "adaptd answered HTTP " + std::to_string(ex.status)}}}});
    }
  }

  void EndSession() {
    bool has_session;
    {
      std::lock_guard lock(mu_);
      has_session = !session_id_.empty();
    }
    if (has_session) Post("DELETE", "");
  }

  ClientConfig config_;
  std::ostream& out_;
  std::mutex mu_;  // guards out_ and the fields below
  std::string session_id_;
  std::string protocol_version_;
  std::set<std::string> cancelled_;
};

}  // namespace

void AddMcpCommand(CLI::App& app, Invocation& invocation) {
  CLI::App* mcp = app.add_subcommand(
      "mcp", "Serve adaptd's MCP tools on stdin/stdout (for assistants that start a process)");
  mcp->callback([&invocation] {
    invocation.run = [&invocation](const ApiClient&, const Console& console) -> Status {
      auto config = ResolveClientConfig(invocation.config);
      if (!config.ok()) return config.status();
      curl_global_init(CURL_GLOBAL_DEFAULT);
      StdioProxy proxy(*config, console.out);
      return proxy.Run(console.in);
    };
  });
}

}  // namespace adapt::cli
