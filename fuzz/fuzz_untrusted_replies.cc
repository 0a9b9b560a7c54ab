// What adaptd reads back from places a tenant controls, after any key has been checked: the
// replies of the file tool inside a sandbox (its root can replace the tool), a registry's
// image manifests and configs (a tenant names the registry), and the XML bodies of the
// storage gateway. The first byte picks the parser. Invariants: nothing crashes, reads out of
// bounds or throws; what a parser accepts has the shape its callers rely on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/s3_xml.h"
#include "base/text.h"
#include "core/file_replies.h"
#include "image/manifest.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void FileReplies(const std::string& text, uint8_t pick) {
  using adapt::core::ReportOpenedPath;
  switch (pick % 4) {
    case 3: {
      // A read-text reply taken is at most what was asked, NUL-free and UTF-8.
      size_t max = pick / 4 * 8;
      auto checked = adapt::core::CheckReadTextReply(text, max);
      if (checked.ok())
        Check(checked->size() <= max && checked->find('\0') == std::string::npos &&
              adapt::IsValidUtf8(*checked));
      break;
    }
    case 0:
      (void)adapt::core::ParseListReply(text);
      break;
    case 1:
      (void)adapt::core::ParseStatReply(text);
      break;
    case 2:
      for (auto report : {ReportOpenedPath::kNo, ReportOpenedPath::kYes}) {
        auto header = adapt::core::ParseDownloadHeader(text, report);
        if (!header.ok()) continue;
        // An opened path is absolute and NUL-free, and only there when it was asked for.
        if (report == ReportOpenedPath::kNo) Check(header->opened_path.empty());
        if (!header->opened_path.empty())
          Check(header->opened_path.front() == '/' &&
                header->opened_path.find('\0') == std::string::npos);
      }
      break;
  }
}

void Registry(const std::string& text, uint8_t pick) {
  static const char* const kTypes[] = {adapt::image::kOciManifest, adapt::image::kOciIndex,
                                       adapt::image::kDockerManifest,
                                       adapt::image::kDockerManifestList, ""};
  if (pick % 2 == 1) {
    (void)adapt::image::ParseImageConfig(text, "image 'fuzz'");
    return;
  }
  auto manifest = adapt::image::ParseManifest(text, kTypes[(pick / 2) % 5]);
  if (!manifest.ok()) return;
  // Every digest a manifest names is checked before it becomes a blob's file name.
  auto digest_ok = [](const std::string& d) {
    return d.size() == 71 && d.compare(0, 7, "sha256:") == 0 &&
           d.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
  };
  if (manifest->is_index) {
    for (const auto& m : manifest->manifests) Check(digest_ok(m.digest));
    (void)adapt::image::PickPlatform(*manifest, "fuzz");
  } else {
    Check(digest_ok(manifest->config.digest));
    for (const auto& l : manifest->layers) Check(digest_ok(l.digest));
    Check(manifest->TotalLayerBytes() <= adapt::image::kMaxImageBytes);
  }
}

void GatewayXml(const std::string& text) {
  // CompleteMultipartUpload and DeleteObjects bodies, read by tag.
  for (const auto& part : adapt::api::XmlElements(text, "Part")) {
    (void)adapt::api::XmlElements(part, "PartNumber");
    (void)adapt::api::XmlElements(part, "ETag");
  }
  for (const auto& object : adapt::api::XmlElements(text, "Object"))
    Check(adapt::api::XmlElements(object, "Key").size() <= object.size());
  Check(adapt::api::XmlUnescape(text).size() <= text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  switch (data[0] % 3) {
    case 0:
      FileReplies(text, data[1]);
      break;
    case 1:
      Registry(text, data[1]);
      break;
    case 2:
      GatewayXml(text);
      break;
  }
  return 0;
}
