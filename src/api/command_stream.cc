// GET /v1/sandboxes/{id}/commands/{cid}/stream: a command's output as Server-Sent Events.
// It replays what was kept, then follows the output live, and ends with one "result" event
// holding the command's record:
//   event: stdout / stderr    data: {"data": "<text>"}
//   event: result             data: <the command, as GET .../commands/{cid} answers>
#include "api/command_stream.h"

#include <atomic>
#include <thread>

#include "api/command_mapping.h"
#include "api/stream_threads.h"

namespace adapt::api {
namespace {

using nlohmann::json;

std::string Event(const char* name, const json& data) {
  return std::string("event: ") + name +
         "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

class CommandOutputStream : public ResponseStream,
                            public std::enable_shared_from_this<CommandOutputStream> {
 public:
  CommandOutputStream(core::CommandService& commands, core::Principal who, std::string sandbox_id,
                      std::string id)
      : commands_(commands),
        who_(std::move(who)),
        sandbox_id_(std::move(sandbox_id)),
        id_(std::move(id)) {}

  void Start(std::shared_ptr<StreamSink> sink) override {
    // A thread of its own: following a long command must not hold a shared worker.
    StartStreamThread([self = shared_from_this(), sink] { self->Pump(*sink); });
  }

  void Stop() override { stopped_ = true; }

 private:
  void Pump(StreamSink& sink) {
    auto tap = commands_.Follow(who_, sandbox_id_, id_);
    if (tap.ok() && *tap) {
      std::string out, err;
      while (!stopped_ && (*tap)->Next(out, err, std::chrono::seconds(1))) {
        bool ok = true;
        if (!out.empty()) ok = sink.Send(Event("stdout", {{"data", out}}));
        if (ok && !err.empty()) ok = sink.Send(Event("stderr", {{"data", err}}));
        // A comment line now and then finds out when the client has gone.
        if (ok && out.empty() && err.empty()) ok = sink.Send(": keepalive\n\n");
        if (!ok) return;
      }
      if (stopped_) return;
      auto done = commands_.Get(who_, sandbox_id_, id_);
      if (done.ok()) sink.Send(Event("result", CommandToJson(*done)));
    } else {
      // Ended before we looked: replay what its record kept.
      auto done = commands_.Get(who_, sandbox_id_, id_);
      if (done.ok()) {
        if (!done->stdout_text.empty()) sink.Send(Event("stdout", {{"data", done->stdout_text}}));
        if (!done->stderr_text.empty()) sink.Send(Event("stderr", {{"data", done->stderr_text}}));
        sink.Send(Event("result", CommandToJson(*done)));
      }
    }
    sink.Close();
  }

  core::CommandService& commands_;
  core::Principal who_;
  std::string sandbox_id_;
  std::string id_;
  std::atomic<bool> stopped_{false};
};

}  // namespace

std::shared_ptr<ResponseStream> MakeCommandOutputStream(core::CommandService& commands,
                                                        const core::Principal& who,
                                                        const std::string& sandbox_id,
                                                        const std::string& id) {
  return std::make_shared<CommandOutputStream>(commands, who, sandbox_id, id);
}

}  // namespace adapt::api
