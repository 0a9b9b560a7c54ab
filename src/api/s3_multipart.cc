#include "api/s3_multipart.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "api/object_routes.h"
#include "api/s3_xml.h"
#include "base/markup.h"
#include "base/time.h"

namespace adapt::api::s3 {

HttpResponse CreateMultipartUpload(const S3Call& c) {
  auto id = c.objects.CreateUpload(c.org, c.key, c.req.Header("content-type"));
  if (!id.ok()) return FromStatus(id.status(), c.key);
  return Xml(200, std::string("<InitiateMultipartUploadResult><Bucket>") + kGatewayBucket +
                      "</Bucket><Key>" + EscapeMarkup(c.key) + "</Key><UploadId>" + *id +
                      "</UploadId></InitiateMultipartUploadResult>");
}

HttpResponse UploadPart(const S3Call& c) {
  size_t off = 0;
  int part = 0;
  try {
    part = std::stoi(Q(c.req, "partNumber"));
  } catch (...) {
    return S3Error(400, "InvalidArgument", "partNumber must be an integer 1..10000");
  }
  auto etag = c.objects.PutPart(c.org, Q(c.req, "uploadId"), c.key, part,
                                c.chunked ? c.chunked->Source() : BodySource(c.req, off));
  if (c.chunked && !c.chunked->status().ok()) return ChunkedError(c.chunked->status(), c.key);
  if (!etag.ok()) return FromStatus(etag.status(), c.key, "NoSuchUpload");
  HttpResponse r = Empty(200);
  r.headers.emplace_back("ETag", "\"" + *etag + "\"");
  return r;
}

HttpResponse CompleteMultipartUpload(const S3Call& c) {
  std::vector<storage::CompletedPart> parts;
  for (const auto& p : XmlElements(c.req.body, "Part")) {
    storage::CompletedPart cp;
    auto numbers = XmlElements(p, "PartNumber");
    auto etags = XmlElements(p, "ETag");
    if (numbers.size() != 1 || etags.size() != 1)
      return S3Error(400, "MalformedXML", "each Part needs one PartNumber and one ETag");
    try {
      cp.number = std::stoi(numbers[0]);
    } catch (...) {
      return S3Error(400, "MalformedXML", "PartNumber must be an integer");
    }
    cp.etag = etags[0];
    cp.etag.erase(std::remove(cp.etag.begin(), cp.etag.end(), '"'), cp.etag.end());
    parts.push_back(cp);
  }
  auto rec = c.objects.CompleteUpload(c.org, Q(c.req, "uploadId"), c.key, parts);
  if (!rec.ok()) {
    if (rec.status().code() == Code::kInvalidArgument)
      return S3Error(400, "InvalidPart", rec.status().message(), c.key);
    return FromStatus(rec.status(), c.key, "NoSuchUpload");
  }
  return Xml(200, std::string("<CompleteMultipartUploadResult><Bucket>") + kGatewayBucket +
                      "</Bucket><Key>" + EscapeMarkup(c.key) + "</Key><ETag>&quot;" + rec->etag +
                      "&quot;</ETag></CompleteMultipartUploadResult>");
}

HttpResponse AbortMultipartUpload(const S3Call& c) {
  Status st = c.objects.AbortUpload(c.org, Q(c.req, "uploadId"), c.key);
  if (!st.ok()) return FromStatus(st, c.key, "NoSuchUpload");
  return Empty(204);
}

HttpResponse ListParts(const S3Call& c) {
  const HttpRequest& req = c.req;
  auto parts = c.objects.ListParts(c.org, Q(req, "uploadId"), c.key);
  if (!parts.ok()) return FromStatus(parts.status(), c.key, "NoSuchUpload");
  // Every part in one page (at most 10,000 small elements); part-number-marker is honoured.
  int marker = 0;
  if (Has(req, "part-number-marker")) {
    try {
      marker = std::stoi(Q(req, "part-number-marker"));
    } catch (...) {
      return S3Error(400, "InvalidArgument", "part-number-marker must be an integer");
    }
  }
  std::ostringstream x;
  x << "<ListPartsResult><Bucket>" << kGatewayBucket << "</Bucket><Key>" << EscapeMarkup(c.key)
    << "</Key><UploadId>" << EscapeMarkup(Q(req, "uploadId")) << "</UploadId>"
    << "<PartNumberMarker>" << marker << "</PartNumberMarker><MaxParts>10000</MaxParts>"
    << "<IsTruncated>false</IsTruncated><StorageClass>STANDARD</StorageClass>";
  const std::string now_text = FormatRfc3339(NowMillis());
  for (const auto& p : *parts) {
    if (p.number <= marker) continue;
    x << "<Part><PartNumber>" << p.number << "</PartNumber><LastModified>" << now_text
      << "</LastModified><ETag>&quot;" << p.etag << "&quot;</ETag><Size>" << p.size
      << "</Size></Part>";
  }
  x << "</ListPartsResult>";
  return Xml(200, x.str());
}

}  // namespace adapt::api::s3
