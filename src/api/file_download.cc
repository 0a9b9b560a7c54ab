#include "api/file_download.h"

#include "api/download_stream.h"

namespace adapt::api {

Result<std::string> QueryFilePath(const HttpRequest& req) {
  auto it = req.query.find("path");
  if (it == req.query.end() || it->second.empty())
    return InvalidArgument("path", "the path query parameter is required");
  RETURN_IF_ERROR(core::ValidateFilePath(it->second));
  return it->second;
}

HttpResponse FileDownload(std::unique_ptr<core::FileReader> reader, const std::string& type) {
  std::shared_ptr<core::FileReader> source = std::move(reader);
  source->MovedOffWorker();  // the router counts the stream among the organization's
  const std::string served_by = source->served_by();
  HttpResponse r =
      StreamDownload({[source](char* buf, size_t n) { return source->Read(buf, n); },
                      [source] { return source->Finish(); }, source->size(), "download of a file"},
                     type);
  r.headers.emplace_back(kServedByHeader, served_by);
  return r;
}

}  // namespace adapt::api
