#include "api/s3_multipart.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <vector>

#include "api/object_routes.h"
#include "api/s3_xml.h"
#include "base/markup.h"
#include "base/percent.h"
#include "base/text.h"
#include "base/time.h"

namespace adapt::api::s3 {
namespace {

// max-uploads: an integer from 1 to 1000; nullopt for anything else.
std::optional<size_t> ParseMaxUploads(const std::string& text) {
  if (text.empty() || text.size() > 4 ||
      !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  size_t n = std::stoul(text);
  if (n < 1 || n > storage::kMaxListLimit) return std::nullopt;
  return n;
}

}  // namespace

HttpResponse CreateMultipartUpload(const S3Call& c) {
  auto id = c.objects.CreateUpload(c.org, c.key, c.req.Header("content-type"));
  if (!id.ok()) return FromStatus(id.status(), c.key);
  return Xml(200, std::string("<InitiateMultipartUploadResult><Bucket>") + kGatewayBucket +
                      "</Bucket><Key>" + EscapeMarkup(c.key) + "</Key><UploadId>" + *id +
                      "</UploadId></InitiateMultipartUploadResult>");
}

HttpResponse UploadPart(const S3Call& c) {
  size_t off = 0;
  auto asked = ParseDecimal(Q(c.req, "partNumber"));
  if (!asked || *asked < 1 || *asked > 10000)
    return S3Error(400, "InvalidArgument", "partNumber must be an integer 1..10000");
  int part = static_cast<int>(*asked);
  auto etag = c.objects.PutPart(c.org, Q(c.req, "uploadId"), c.key, part,
                                c.chunked ? c.chunked->Source() : BodySource(c.req, off),
                                c.req.body_stream ? c.expected_sha : "");
  if (c.chunked && !c.chunked->status().ok()) return ChunkedError(c.chunked->status(), c.key);
  if (!etag.ok()) {
    if (etag.status().field() == "x-amz-content-sha256")
      return S3Error(400, "XAmzContentSHA256Mismatch", etag.status().message(), c.key);
    return FromStatus(etag.status(), c.key, "NoSuchUpload");
  }
  HttpResponse r = Empty(200);
  r.headers.emplace_back("ETag", "\"" + *etag + "\"");
  return r;
}

HttpResponse CompleteMultipartUpload(const S3Call& c) {
  std::vector<storage::CompletedPart> parts;
  for (const auto& p : XmlElements(c.body, "Part")) {
    storage::CompletedPart cp;
    auto numbers = XmlElements(p, "PartNumber");
    auto etags = XmlElements(p, "ETag");
    if (numbers.size() != 1 || etags.size() != 1)
      return S3Error(400, "MalformedXML", "each Part needs one PartNumber and one ETag");
    auto number = ParseDecimal(numbers[0]);
    if (!number || *number < INT32_MIN || *number > INT32_MAX)
      return S3Error(400, "MalformedXML", "PartNumber must be an integer");
    cp.number = static_cast<int>(*number);
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
    auto asked = ParseDecimal(Q(req, "part-number-marker"));
    if (!asked || *asked < 0 || *asked > 10000)
      return S3Error(400, "InvalidArgument", "part-number-marker must be an integer 0..10000");
    marker = static_cast<int>(*asked);
  }
  std::ostringstream x;
  x << "<ListPartsResult><Bucket>" << kGatewayBucket << "</Bucket><Key>" << EscapeMarkup(c.key)
    << "</Key><UploadId>" << EscapeMarkup(Q(req, "uploadId")) << "</UploadId>"
    << "<PartNumberMarker>" << marker << "</PartNumberMarker><MaxParts>10000</MaxParts>"
    << "<IsTruncated>false</IsTruncated><StorageClass>STANDARD</StorageClass>";
  for (const auto& p : *parts) {
    if (p.number <= marker) continue;
    x << "<Part><PartNumber>" << p.number << "</PartNumber><LastModified>"
      << FormatRfc3339(p.modified_at) << "</LastModified><ETag>&quot;" << p.etag
      << "&quot;</ETag><Size>" << p.size << "</Size></Part>";
  }
  x << "</ListPartsResult>";
  return Xml(200, x.str());
}

HttpResponse ListMultipartUploads(const S3Call& c) {
  const HttpRequest& req = c.req;
  const bool url = Q(req, "encoding-type") == "url";
  auto enc = [url](const std::string& s) { return EscapeMarkup(url ? PercentEncode(s, true) : s); };
  storage::UploadListQuery q;
  if (Has(req, "max-uploads")) {
    auto max = ParseMaxUploads(Q(req, "max-uploads"));
    if (!max)
      return S3Error(400, "InvalidArgument", "max-uploads must be an integer from 1 to 1000");
    q.max = *max;
  }
  q.prefix = Q(req, "prefix");
  q.delimiter = Q(req, "delimiter");
  q.key_marker = Q(req, "key-marker");
  q.upload_id_marker = Q(req, "upload-id-marker");
  auto list = c.objects.ListUploads(c.org, q);
  if (!list.ok()) return FromStatus(list.status(), q.prefix);
  std::ostringstream x;
  x << "<ListMultipartUploadsResult><Bucket>" << kGatewayBucket << "</Bucket><KeyMarker>"
    << enc(q.key_marker) << "</KeyMarker><UploadIdMarker>" << EscapeMarkup(q.upload_id_marker)
    << "</UploadIdMarker>";
  if (list->truncated)
    x << "<NextKeyMarker>" << enc(list->next_key_marker) << "</NextKeyMarker><NextUploadIdMarker>"
      << EscapeMarkup(list->next_upload_id_marker) << "</NextUploadIdMarker>";
  x << "<Prefix>" << enc(q.prefix) << "</Prefix>";
  if (!q.delimiter.empty()) x << "<Delimiter>" << enc(q.delimiter) << "</Delimiter>";
  x << "<MaxUploads>" << q.max << "</MaxUploads>";
  if (url) x << "<EncodingType>url</EncodingType>";
  x << "<IsTruncated>" << (list->truncated ? "true" : "false") << "</IsTruncated>";
  // Every storage token of the organization may list, complete and abort its uploads; none
  // records which token began one, so the organization is initiator and owner.
  const std::string who =
      "<ID>" + EscapeMarkup(c.org) + "</ID><DisplayName>" + EscapeMarkup(c.org) + "</DisplayName>";
  for (const auto& u : list->uploads)
    x << "<Upload><Key>" << enc(u.key) << "</Key><UploadId>" << u.upload_id
      << "</UploadId><Initiator>" << who << "</Initiator><Owner>" << who
      << "</Owner><StorageClass>STANDARD</StorageClass><Initiated>" << FormatRfc3339(u.created_at)
      << "</Initiated></Upload>";
  for (const auto& p : list->common_prefixes)
    x << "<CommonPrefixes><Prefix>" << enc(p) << "</Prefix></CommonPrefixes>";
  x << "</ListMultipartUploadsResult>";
  return Xml(200, x.str());
}

}  // namespace adapt::api::s3
