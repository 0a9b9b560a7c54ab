#include "cli/sandbox_watch.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

namespace adapt::cli {
namespace {

std::string Text(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// One SSE frame as it is read, line by line.
struct Frame {
  std::string id;
  std::string event;
  std::string data;
};

}  // namespace

std::string SandboxEventLine(const std::string& event, const std::string& data, bool json) {
  nlohmann::json body = nlohmann::json::parse(data, nullptr, false);
  if (!body.is_object()) return "";
  if (json) {
    body["event"] = event;
    return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (event == "reset") return "events were missed: " + Text(body, "reason");
  if (event != "status") return "";
  return Text(body, "at") + "  " + Text(body, "sandboxId") + "  " + Text(body, "status");
}

Status WatchSandboxes(const ApiClient& client, const Console& console, bool json,
                      const std::function<Status()>& print_list) {
  std::string last_id;
  bool listed = false;
  Status list_status = Status::Ok();
  for (;;) {
    Frame frame;
    auto on_line = [&](std::string_view line) {
      if (!listed) {
        // The stream is open (adaptd sends a comment first): list now, then print events.
        listed = true;
        list_status = print_list();
        if (!list_status.ok()) return false;
      }
      if (line.starts_with("id:")) {
        frame.id = std::string(line.substr(line.starts_with("id: ") ? 4 : 3));
      } else if (line.starts_with("event:")) {
        frame.event = std::string(line.substr(line.starts_with("event: ") ? 7 : 6));
      } else if (line.starts_with("data:")) {
        frame.data += std::string(line.substr(line.starts_with("data: ") ? 6 : 5));
      } else if (line.empty()) {
        if (!frame.id.empty()) last_id = frame.id;
        std::string text = SandboxEventLine(frame.event, frame.data, json);
        if (!text.empty()) console.out << text << std::endl;  // flushed: read from a pipe
        if (frame.event == "reset") {
          list_status = print_list();
          if (!list_status.ok()) return false;
        }
        frame = Frame{};
      }
      return true;
    };
    StreamOptions options;
    if (!last_id.empty()) options.headers.emplace_back("Last-Event-ID", last_id);
    Result<HttpResponse> response = client.Stream("/v1/events", on_line, options);
    if (!list_status.ok()) return list_status;
    if (response.ok() && response->status >= 400) return ErrorFromResponse(*response);
    if (!response.ok() && !listed) return response.status();  // never reached adaptd at all
    // The stream ended or adaptd is away (a restart): open it again where it left off.
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace adapt::cli
