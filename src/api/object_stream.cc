#include "api/object_stream.h"

#include <thread>
#include <vector>

#include "api/stream_threads.h"

namespace adapt::api {
namespace {

constexpr size_t kChunk = 256 * 1024;
constexpr size_t kMaxQueued = 4 << 20;

class FileStream : public ResponseStream, public std::enable_shared_from_this<FileStream> {
 public:
  FileStream(std::unique_ptr<os::FileReader> reader, uint64_t length)
      : reader_(std::move(reader)), left_(length) {}

  void Start(std::shared_ptr<StreamSink> sink) override {
    StartStreamThread([self = shared_from_this(), sink = std::move(sink)] { self->Pump(*sink); });
  }
  void Stop() override {}

 private:
  void Pump(StreamSink& sink) {
    std::vector<char> buf(kChunk);
    while (left_ > 0) {
      if (!sink.WaitForRoom(kMaxQueued)) return;
      long n = reader_->Read(buf.data(), std::min<uint64_t>(buf.size(), left_));
      if (n <= 0) break;  // truncated underneath us: the client sees a short body
      left_ -= static_cast<uint64_t>(n);
      if (!sink.Send(std::string(buf.data(), static_cast<size_t>(n)))) return;
    }
    sink.Close();
  }

  std::unique_ptr<os::FileReader> reader_;
  uint64_t left_;
};

}  // namespace

HttpResponse StreamFileResponse(std::unique_ptr<os::FileReader> reader, uint64_t length,
                                const std::string& content_type, int status) {
  HttpResponse r;
  r.status = status;
  r.content_type = content_type;
  r.stream_length = length;
  r.stream = std::make_shared<FileStream>(std::move(reader), length);
  return r;
}

}  // namespace adapt::api
