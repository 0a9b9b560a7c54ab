#include "api/download_stream.h"

#include <algorithm>
#include <string>

#include "api/stream_threads.h"
#include "base/log.h"

namespace adapt::api {
namespace {

constexpr size_t kChunk = 256 * 1024;
// Bytes a download may have queued for a slow client before the pump waits.
constexpr size_t kMaxQueued = 4 << 20;

class DownloadStream : public ResponseStream, public std::enable_shared_from_this<DownloadStream> {
 public:
  explicit DownloadStream(DownloadSource source) : source_(std::move(source)) {}

  // Start must not block: the pump runs on a thread of its own.
  void Start(std::shared_ptr<StreamSink> sink) override {
    StartStreamThread([self = shared_from_this(), sink = std::move(sink)] { self->Pump(*sink); });
  }
  // The pump notices through the sink, which is closed by now.
  void Stop() override {}

 private:
  void Pump(StreamSink& sink) {
    // A body never runs past its Content-Length, whatever the source has (a sandbox's file
    // that grows while it is read, a tool that sends more than it announced).
    std::optional<uint64_t> left = source_.length;
    for (;;) {
      // The client left: dropping the source ends it (a sandbox agent is killed).
      if (!sink.WaitForRoom(kMaxQueued)) return;
      // Read straight into the chunk that is queued: copying every byte out of a buffer of
      // the pump's own was a GET's largest cost in user space (bench/README.md, "storage").
      std::string chunk(left ? static_cast<size_t>(std::min<uint64_t>(kChunk, *left)) : kChunk,
                        '\0');
      long n = chunk.empty() ? 0 : source_.read(chunk.data(), chunk.size());
      if (n < 0) {
        spdlog::warn("{}: reading the source failed", source_.what);
        break;  // the client sees a short body
      }
      if (n == 0) {
        // Short of its Content-Length, the body ends with the connection, which its client
        // sees as the error it is.
        if (left && *left > 0)
          spdlog::warn("{}: the source ended {} bytes short of the length announced", source_.what,
                       *left);
        if (source_.finish) {
          Status st = source_.finish();
          if (!st.ok()) spdlog::warn("{}: {}", source_.what, st.message());
        }
        break;
      }
      if (left) *left -= static_cast<uint64_t>(n);
      chunk.resize(static_cast<size_t>(n));
      // A short read (a sandbox's file trickling in) must not hold a whole chunk's memory
      // while it waits in the queue, which counts only its bytes.
      if (chunk.size() < kChunk / 4) chunk.shrink_to_fit();
      if (!sink.Send(std::move(chunk))) return;
    }
    sink.Close();
  }

  DownloadSource source_;
};

}  // namespace

HttpResponse StreamDownload(DownloadSource source, const std::string& content_type, int status) {
  HttpResponse r;
  r.status = status;
  r.content_type = content_type;
  r.stream_length = source.length;
  r.stream = std::make_shared<DownloadStream>(std::move(source));
  return r;
}

HttpResponse StreamFileResponse(std::unique_ptr<os::FileReader> reader, uint64_t length,
                                const std::string& content_type, int status) {
  // The pump stops at `length`: a range of a blob ends before the file does. A file cut short
  // underneath ends the body short.
  auto read = [file = std::shared_ptr<os::FileReader>(std::move(reader))](
                  char* buf, size_t n) -> long { return std::max(file->Read(buf, n), 0L); };
  return StreamDownload({std::move(read), nullptr, length, "download"}, content_type, status);
}

void MarkTenantFile(HttpResponse& r, const std::string& key) {
  std::string name = key.substr(key.rfind('/') + 1);
  std::string safe;
  // A quoted-string of printable ASCII: quotes, backslashes and anything else made '_'.
  for (char c : name) safe.push_back(c < 0x20 || c > 0x7e || c == '"' || c == '\\' ? '_' : c);
  r.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + safe + "\"");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Content-Security-Policy", "sandbox");
}

}  // namespace adapt::api
