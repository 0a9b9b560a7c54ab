// The storage gateway: a path-style S3 subset over one organization's objects, chosen by the
// storage token that signed the request (SigV4 in the Authorization header or in a presigned
// URL's query: access key id = token id, secret = token secret) or that it carries as
// `Authorization: Bearer <token>` (curl). Every token sees the one bucket "objects": its own
// organization's namespace. Apart from that, /_releases/ serves a deployed app's replica its
// release by a release reference (no token).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>

#include "api/download_stream.h"
#include "api/object_routes.h"
#include "api/s3_multipart.h"
#include "api/s3_responses.h"
#include "api/s3_xml.h"
#include "base/constant_time.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/markup.h"
#include "base/percent.h"
#include "base/text.h"
#include "base/time.h"
#include "storage/aws_chunked.h"
#include "storage/object_key.h"
#include "storage/sigv4.h"

namespace adapt::api {
namespace s3 {
namespace {

constexpr int64_t kMaxSkewSeconds = 15 * 60;
// A POST's XML body (DeleteObjects of 1,000 keys of 1 KiB, CompleteMultipartUpload of 10,000
// parts) fits with room to spare.
constexpr size_t kMaxXmlBodyBytes = 4 << 20;
constexpr size_t kMaxDeleteKeys = 1000;  // keys one DeleteObjects names, as in S3
// Replicas' release downloads: not a bucket name S3 allows, so no clash with path style.
constexpr const char* kReleasePrefix = "/_releases/";

std::string RawQuery(const HttpRequest& req) {
  size_t q = req.target.find('?');
  return q == std::string::npos ? "" : req.target.substr(q + 1);
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

void AddObjectHeaders(HttpResponse& r, const store::ObjectRecord& o) {
  r.headers.emplace_back("ETag", "\"" + o.etag + "\"");
  r.headers.emplace_back("Last-Modified", HttpDate(o.created_at));
  r.headers.emplace_back("Accept-Ranges", "bytes");
  r.headers.emplace_back("x-amz-meta-sha256", o.sha256);
}

// Who sent a request, and how its body is to be read.
struct Caller {
  Result<store::StorageTokenRecord> token = Status(Code::kUnauthenticated, "");
  // Set for a SigV4 header signature: what an aws-chunked body's chunks chain from.
  std::optional<storage::SigV4Authorization> signed_by;
  std::string payload_hash;  // x-amz-content-sha256; cleared for a presigned URL
};

// A signature vouches only for the headers it names: an x-amz-* header beside them (a copy
// source added to a presigned PUT) is refused, as S3 refuses it.
std::optional<HttpResponse> RefuseUnsignedHeaders(const storage::SigV4Authorization& auth,
                                                  const HttpRequest& req) {
  std::string unsigned_header = storage::UnsignedAmzHeader(auth, req.headers);
  if (unsigned_header.empty()) return std::nullopt;
  return S3Error(403, "AccessDenied",
                 "the request carries the header " + unsigned_header +
                     ", which its signature does not cover: sign every x-amz-* header it sends");
}

// A SigV4-signed request (header or presigned URL) or a bearer storage token; the refusal when
// it is none of them or does not verify.
std::optional<HttpResponse> Authenticate(const HttpRequest& req, storage::StorageTokens& tokens,
                                         Caller& caller) {
  std::string auth = req.Header("authorization");
  caller.payload_hash = req.Header("x-amz-content-sha256");
  auto& token = caller.token;
  const int64_t now = NowMillis() / 1000;
  if (Has(req, "X-Amz-Algorithm") || Has(req, "X-Amz-Signature")) {
    // Presigned URL (`aws s3 presign`): the signature is in the query; the body is unsigned.
    auto parsed = storage::ParseSigV4Query(req.query);
    if (!parsed.ok())
      return S3Error(400, "AuthorizationQueryParametersError", parsed.status().message());
    token = tokens.Active(parsed->access_key);
    if (!token.ok())
      return S3Error(
          403, "InvalidAccessKeyId",
          "the access key id is not a valid storage token (unknown, expired or revoked)");
    int64_t at = storage::ParseAmzDate(parsed->amz_date);
    if (at < 0) return S3Error(403, "AccessDenied", "X-Amz-Date is malformed");
    if (at > now + kMaxSkewSeconds)
      return S3Error(403, "AccessDenied", "the presigned URL is dated in the future");
    if (now > at + parsed->expires_seconds)
      return S3Error(403, "AccessDenied",
                     "Request has expired: the presigned URL is no longer valid");
    storage::SigV4Request sreq{req.method,         req.path,         RawQuery(req), &req.headers,
                               "UNSIGNED-PAYLOAD", parsed->amz_date, true};
    std::string want = storage::SigV4Signature(*parsed, sreq, tokens.SecretOf(token->id));
    if (!ConstantTimeEquals(want, parsed->signature))
      return S3Error(403, "SignatureDoesNotMatch",
                     "the presigned URL's signature does not match the storage token's secret");
    if (auto refused = RefuseUnsignedHeaders(*parsed, req)) return refused;
    caller.payload_hash.clear();
  } else if (auth.rfind("AWS4-HMAC-SHA256", 0) == 0) {
    auto parsed = storage::ParseSigV4Authorization(auth);
    if (!parsed.ok())
      return S3Error(400, "AuthorizationHeaderMalformed", parsed.status().message());
    token = tokens.Active(parsed->access_key);
    if (!token.ok())
      return S3Error(
          403, "InvalidAccessKeyId",
          "the access key id is not a valid storage token (unknown, expired or revoked)");
    int64_t at = storage::ParseAmzDate(req.Header("x-amz-date"));
    if (at < 0) return S3Error(403, "AccessDenied", "x-amz-date is missing or malformed");
    if (std::llabs(at - now) > kMaxSkewSeconds)
      return S3Error(403, "RequestTimeTooSkewed", "x-amz-date is more than 15 minutes off");
    storage::SigV4Request sreq{
        req.method, req.path, RawQuery(req), &req.headers,
        caller.payload_hash.empty() ? "UNSIGNED-PAYLOAD" : caller.payload_hash};
    std::string want = storage::SigV4Signature(*parsed, sreq, tokens.SecretOf(token->id));
    if (!ConstantTimeEquals(want, parsed->signature))
      return S3Error(403, "SignatureDoesNotMatch",
                     "the request signature does not match the storage token's secret");
    if (auto refused = RefuseUnsignedHeaders(*parsed, req)) return refused;
    caller.signed_by = *parsed;
  } else if (auth.rfind("Bearer ", 0) == 0) {
    token = tokens.VerifyBearer(auth.substr(7));
    if (!token.ok()) return S3Error(403, "AccessDenied", token.status().message());
  } else {
    return S3Error(403, "AccessDenied",
                   "sign the request with a storage token (SigV4) or send it as a bearer token");
  }
  return std::nullopt;
}

HttpResponse ListBuckets(const std::string& org) {
  return Xml(200, std::string("<ListAllMyBucketsResult><Owner><ID>") + EscapeMarkup(org) +
                      "</ID></Owner><Buckets><Bucket><Name>" + kGatewayBucket +
                      "</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket>"
                      "</Buckets></ListAllMyBucketsResult>");
}

// POST /objects?delete. A key that is not there is deleted all the same, as in S3; a key that
// fails gets S3's code for its failure, and an internal one only the fixed sentence. At most
// 1,000 keys, as S3: each is a store transaction, and one request must not hold the store
// for hundreds of thousands of them. Quiet mode lists the failures only.
HttpResponse DeleteObjects(const S3Call& c) {
  std::vector<std::string> keys = XmlElements(c.body, "Key");
  if (keys.size() > kMaxDeleteKeys)
    return S3Error(400, "MalformedXML",
                   "a delete names at most " + std::to_string(kMaxDeleteKeys) + " keys");
  auto quiet = XmlElements(c.body, "Quiet");
  const bool only_errors = !quiet.empty() && quiet.front() == "true";
  std::string out = "<DeleteResult>";
  for (const auto& k : keys) {
    Status st = c.objects.Delete(c.org, k);
    if (st.ok() || st.code() == Code::kNotFound) {
      if (!only_errors) out += "<Deleted><Key>" + EscapeMarkup(k) + "</Key></Deleted>";
      continue;
    }
    S3Failure failure = FailureOf(st);
    out += "<Error><Key>" + EscapeMarkup(k) + "</Key><Code>" + failure.code + "</Code><Message>" +
           EscapeMarkup(failure.message) + "</Message></Error>";
  }
  return Xml(200, out + "</DeleteResult>");
}

// ListObjectsV2 (list-type=2) or V1.
HttpResponse ListObjects(const S3Call& c) {
  const HttpRequest& req = c.req;
  const bool v2 = Q(req, "list-type") == "2";
  const bool url = Q(req, "encoding-type") == "url";
  auto enc = [url](const std::string& s) { return EscapeMarkup(url ? PercentEncode(s, true) : s); };
  int max_keys = 1000;
  if (Has(req, "max-keys")) {
    auto asked = ParseDecimal(Q(req, "max-keys"));
    if (!asked) return S3Error(400, "InvalidArgument", "max-keys must be an integer");
    if (*asked < 0) return S3Error(400, "InvalidArgument", "max-keys must not be negative");
    max_keys = static_cast<int>(std::min<int64_t>(*asked, 1000));
  }
  std::string prefix = Q(req, "prefix"), delimiter = Q(req, "delimiter");
  std::string after = v2 ? Q(req, "start-after") : Q(req, "marker");
  if (v2 && Has(req, "continuation-token")) {
    // A token this gateway did not give is refused: read as "from the start", a client
    // following it would list the same page for ever. (An empty one is the start.)
    auto token = HexDecode(Q(req, "continuation-token"));
    if (!token)
      return S3Error(400, "InvalidArgument", "The continuation token provided is incorrect");
    after = std::move(*token);
  }
  // A V1 NextMarker that is a rolled-up prefix: continue after everything under it.
  if (!v2 && !delimiter.empty() && after.size() >= delimiter.size() &&
      after.compare(after.size() - delimiter.size(), delimiter.size(), delimiter) == 0)
    after += "\xff";
  storage::ObjectListing list;
  if (max_keys > 0) {
    auto got = c.objects.List(c.org, prefix, delimiter, after, static_cast<size_t>(max_keys));
    if (!got.ok()) return FromStatus(got.status(), prefix);
    list = std::move(*got);
  }
  std::ostringstream x;
  x << (v2 ? "<ListBucketResult>" : "<ListBucketResult>") << "<Name>" << kGatewayBucket
    << "</Name><Prefix>" << enc(prefix) << "</Prefix>";
  if (!delimiter.empty()) x << "<Delimiter>" << enc(delimiter) << "</Delimiter>";
  x << "<MaxKeys>" << max_keys << "</MaxKeys>";
  if (url) x << "<EncodingType>url</EncodingType>";
  x << "<IsTruncated>" << (list.truncated ? "true" : "false") << "</IsTruncated>";
  if (v2) {
    x << "<KeyCount>" << list.objects.size() + list.common_prefixes.size() << "</KeyCount>";
    if (Has(req, "continuation-token"))
      x << "<ContinuationToken>" << EscapeMarkup(Q(req, "continuation-token"))
        << "</ContinuationToken>";
    if (list.truncated)
      x << "<NextContinuationToken>" << HexEncode(list.next_after) << "</NextContinuationToken>";
    if (Has(req, "start-after"))
      x << "<StartAfter>" << enc(Q(req, "start-after")) << "</StartAfter>";
  } else {
    x << "<Marker>" << enc(Q(req, "marker")) << "</Marker>";
    if (list.truncated) {
      std::string next = list.next_after;
      if (!next.empty() && next.back() == '\xff') next.pop_back();
      x << "<NextMarker>" << enc(next) << "</NextMarker>";
    }
  }
  for (const auto& o : list.objects) {
    x << "<Contents><Key>" << enc(o.key) << "</Key><LastModified>" << FormatRfc3339(o.created_at)
      << "</LastModified><ETag>&quot;" << o.etag << "&quot;</ETag><Size>" << o.size
      << "</Size><StorageClass>STANDARD</StorageClass>"
      << "</Contents>";
  }
  for (const auto& p : list.common_prefixes)
    x << "<CommonPrefixes><Prefix>" << enc(p) << "</Prefix></CommonPrefixes>";
  x << "</ListBucketResult>";
  return Xml(200, x.str());
}

// The calls on the bucket itself.
HttpResponse BucketCall(const S3Call& c) {
  const std::string& m = c.req.method;
  if (m == "HEAD" || m == "PUT") return Empty(200);  // exists, and is the caller's
  if (m == "POST" && Has(c.req, "delete")) return DeleteObjects(c);
  if (m != "GET") return S3Error(405, "MethodNotAllowed", "not supported on a bucket");
  if (Has(c.req, "location")) return Xml(200, "<LocationConstraint>us-east-1</LocationConstraint>");
  if (Has(c.req, "uploads")) return ListMultipartUploads(c);
  return ListObjects(c);
}

// PUT /objects/<key> with x-amz-copy-source.
HttpResponse CopyObject(const S3Call& c) {
  std::string src = c.req.Header("x-amz-copy-source");
  // "/objects/key" or "objects/key", URL-encoded.
  auto copy_source = PercentDecode(src, PlusSign::kLiteral);
  if (!copy_source)
    return S3Error(400, "InvalidArgument", "x-amz-copy-source has a broken % escape");
  std::string decoded = std::move(*copy_source);
  if (!decoded.empty() && decoded.front() == '/') decoded.erase(0, 1);
  std::string prefix = std::string(kGatewayBucket) + "/";
  if (decoded.compare(0, prefix.size(), prefix) != 0)
    return S3Error(404, "NoSuchBucket", "copies work within the bucket objects only");
  auto rec = c.objects.Copy(c.org, decoded.substr(prefix.size()), c.key);
  if (!rec.ok()) return FromStatus(rec.status(), c.key);
  return Xml(200, "<CopyObjectResult><LastModified>" + FormatRfc3339(rec->created_at) +
                      "</LastModified><ETag>&quot;" + rec->etag +
                      "&quot;</ETag></CopyObjectResult>");
}

HttpResponse PutObject(const S3Call& c) {
  size_t off = 0;
  auto rec = c.objects.Put(c.org, c.key, c.req.Header("content-type"),
                           c.chunked ? c.chunked->Source() : BodySource(c.req, off),
                           c.req.body_stream ? c.expected_sha : "");
  if (c.chunked && !c.chunked->status().ok()) return ChunkedError(c.chunked->status(), c.key);
  if (!rec.ok()) {
    if (rec.status().field() == "x-amz-content-sha256")
      return S3Error(400, "XAmzContentSHA256Mismatch", rec.status().message(), c.key);
    return FromStatus(rec.status(), c.key);
  }
  HttpResponse r = Empty(200);
  r.headers.emplace_back("ETag", "\"" + rec->etag + "\"");
  return r;
}

HttpResponse DeleteObject(const S3Call& c) {
  Status st = c.objects.Delete(c.org, c.key);
  if (!st.ok() && st.code() != Code::kNotFound) return FromStatus(st, c.key);
  return Empty(204);
}

// Digits only, as a Range header's positions are (RFC 9110 14.1.1); none on anything else.
std::optional<uint64_t> RangePosition(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The one byte range a `Range: bytes=...` header asks of an object of `size` bytes: nullopt
// when the header is absent, has several ranges or does not parse (the whole object is
// served, as RFC 9110 says to ignore what it cannot use); a Status when the range is valid
// but no byte of the object is in it (416).
struct ByteRange {
  uint64_t begin = 0, length = 0;
};
Result<std::optional<ByteRange>> RequestedRange(const std::string& header, uint64_t size) {
  if (header.rfind("bytes=", 0) != 0 || header.find(',') != std::string::npos)
    return std::optional<ByteRange>();
  std::string_view spec = std::string_view(header).substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return std::optional<ByteRange>();
  const Status unsatisfiable(Code::kInvalidArgument, "the range is outside the object");
  if (dash == 0) {  // the last N bytes
    auto n = RangePosition(spec.substr(1));
    if (!n) return std::optional<ByteRange>();
    if (*n == 0 || size == 0) return unsatisfiable;
    uint64_t take = std::min(*n, size);
    return std::optional<ByteRange>(ByteRange{size - take, take});
  }
  auto first = RangePosition(spec.substr(0, dash));
  std::optional<uint64_t> last = UINT64_MAX;  // "N-": to the end
  if (dash + 1 < spec.size()) last = RangePosition(spec.substr(dash + 1));
  if (!first || !last || *last < *first) return std::optional<ByteRange>();
  if (*first >= size) return unsatisfiable;
  return std::optional<ByteRange>(ByteRange{*first, std::min(*last, size - 1) - *first + 1});
}

// GET or HEAD /objects/<key>, with one byte range at most.
HttpResponse GetObject(const S3Call& c) {
  const std::string& key = c.key;
  auto opened = c.objects.Open(c.org, key);
  if (!opened.ok()) return FromStatus(opened.status(), key);
  auto& [rec, reader] = *opened;
  auto range = RequestedRange(c.req.Header("range"), rec.size);
  if (!range.ok()) {
    HttpResponse r = S3Error(416, "InvalidRange", range.status().message(), key);
    r.headers.emplace_back("Content-Range", "bytes */" + std::to_string(rec.size));
    return r;
  }
  uint64_t begin = *range ? (*range)->begin : 0;
  uint64_t length = *range ? (*range)->length : rec.size;
  int status = *range ? 206 : 200;
  if (begin) {
    if (Status st = reader->Seek(begin); !st.ok()) return FromStatus(st, key);
  }
  HttpResponse r = StreamFileResponse(std::move(reader), length, rec.content_type, status);
  AddObjectHeaders(r, rec);
  if (status == 206)
    r.headers.emplace_back("Content-Range", "bytes " + std::to_string(begin) + "-" +
                                                std::to_string(begin + length - 1) + "/" +
                                                std::to_string(rec.size));
  return r;
}

// `response` counted among `org`'s open streams when it is one (a download holds a stream
// thread of its own, not a storage worker, for as long as its client takes to read it); past
// --max-streams-per-org, 503 SlowDown, which S3 clients retry.
HttpResponse CountedStream(const ObjectApi& api, const std::string& org, HttpResponse response) {
  if (!api.stream_limit) return response;
  auto admitted = api.stream_limit->TryAdmit(org, std::move(response));
  if (!admitted.ok()) return S3Error(503, "SlowDown", admitted.status().message());
  return std::move(*admitted);
}

// The calls on one object, by method and query.
HttpResponse ObjectCall(const S3Call& c) {
  const std::string& m = c.req.method;
  if (m == "PUT" && Has(c.req, "uploadId")) return UploadPart(c);
  if (m == "PUT" && !c.req.Header("x-amz-copy-source").empty()) return CopyObject(c);
  if (m == "PUT") return PutObject(c);
  if (m == "POST" && Has(c.req, "uploads")) return CreateMultipartUpload(c);
  if (m == "POST" && Has(c.req, "uploadId")) return CompleteMultipartUpload(c);
  if (m == "DELETE" && Has(c.req, "uploadId")) return AbortMultipartUpload(c);
  if (m == "DELETE") return DeleteObject(c);
  if (m == "GET" && Has(c.req, "uploadId")) return ListParts(c);
  if (m == "GET" || m == "HEAD") return GetObject(c);
  return S3Error(405, "MethodNotAllowed", "method " + m + " is not supported on an object");
}

// GET /_releases/<blob>?org=&expires=&signature=: a deployed app's replica downloading its
// release with the release reference adaptd handed it (StorageTokens::SignRelease): that one
// stored blob, read-only, until it expires; no storage token, no other object.
HttpResponse ServeRelease(ObjectApi& api, const HttpRequest& req) {
  const std::string blob = req.path.substr(std::string_view(kReleasePrefix).size());
  if (req.method != "GET") return S3Error(405, "MethodNotAllowed", "a release is only read");
  auto query = [&](const char* name) {
    auto it = req.query.find(name);
    return it == req.query.end() ? std::string() : it->second;
  };
  auto expires = ParseDecimal(query("expires"));
  if (!expires) return S3Error(403, "AccessDenied", "the release reference is not valid", req.path);
  if (Status st = api.tokens.VerifyRelease(query("org"), blob, *expires, query("signature"));
      !st.ok())
    return FromStatus(st, req.path);
  auto reader = api.objects.OpenBlob(blob);
  if (!reader.ok()) return S3Error(404, "NoSuchKey", "the release is gone", req.path);
  const uint64_t size = (*reader)->size();
  return CountedStream(api, query("org"),
                       StreamFileResponse(std::move(*reader), size, "application/zstd"));
}

// Reads a POST's XML body into `xml`, once its sender is authenticated (the listener streams
// every body, so nothing of it was read before); the refusal when it is too large or broken.
std::optional<HttpResponse> ReadXmlBody(const HttpRequest& req, storage::AwsChunkedDecoder* chunked,
                                        std::string& xml) {
  const std::string too_large = "the request body is larger than " +
                                std::to_string(kMaxXmlBodyBytes >> 20) + " MiB, the most " +
                                "the storage gateway reads of an XML request";
  const std::string declared = req.Header("content-length");
  uint64_t length = 0;
  auto [end, ec] = std::from_chars(declared.data(), declared.data() + declared.size(), length);
  if (!declared.empty() && ec == std::errc() && end == declared.data() + declared.size() &&
      length > kMaxXmlBodyBytes)
    return S3Error(400, "MaxMessageLengthExceeded", too_large);
  size_t off = 0;
  storage::ObjectSource source = chunked ? chunked->Source() : BodySource(req, off);
  char buf[16384];
  for (;;) {
    long n = source(buf, sizeof buf);
    if (chunked && !chunked->status().ok()) return ChunkedError(chunked->status(), "");
    if (n < 0) return S3Error(400, "IncompleteBody", "the request body was cut short");
    if (n == 0) return std::nullopt;
    if (xml.size() + static_cast<size_t>(n) > kMaxXmlBodyBytes)
      return S3Error(400, "MaxMessageLengthExceeded", too_large);
    xml.append(buf, static_cast<size_t>(n));
  }
}

// Every request on the gateway's listener: a release download, or a signed S3 call.
HttpResponse Serve(ObjectApi& api, const HttpRequest& req) {
  if (req.path.rfind(kReleasePrefix, 0) == 0) return ServeRelease(api, req);
  Caller caller;
  // From the head alone: the body of a request refused here is never read (the connection
  // drains it and closes), so a client without a token makes adaptd buffer none of it.
  if (auto refused = Authenticate(req, api.tokens, caller)) return std::move(*refused);
  const auto& token = caller.token;
  // A PUT streams its body into the store, a POST's XML is read whole: either holds a storage
  // worker while its client sends. Held until the answer is made (this function's end).
  std::shared_ptr<void> upload_place;
  if (req.method == "PUT" || req.method == "POST") {
    OrgCounter::Refusal refusal;
    upload_place = api.body_uploads.TryTake(token->org_id, &refusal);
    if (refusal == OrgCounter::Refusal::kOrganization)
      return S3Error(503, "SlowDown",
                     "the organization already sends " +
                         std::to_string(api.body_uploads.per_org()) +
                         " uploads to the storage gateway, the most it may at once; retry when "
                         "one has ended");
    if (!upload_place)
      return S3Error(503, "SlowDown",
                     "the storage gateway receives as many uploads as it can at once; retry "
                     "shortly");
  }
  std::string& payload_hash = caller.payload_hash;
  // aws-chunked: the body's chunks are decoded and each chunk's signature checked as it streams.
  std::unique_ptr<storage::AwsChunkedDecoder> chunked;
  if (payload_hash == storage::kStreamingPayload) {
    if (!caller.signed_by)
      return S3Error(400, "InvalidRequest", "an aws-chunked body needs a SigV4 header signature");
    size_t raw_off = 0;
    auto raw = [&req, raw_off](char* buf, size_t n) mutable -> long {
      if (req.body_stream) return req.body_stream->Read(buf, n);
      size_t take = std::min(n, req.body.size() - raw_off);
      std::copy_n(req.body.data() + raw_off, take, buf);
      raw_off += take;
      return static_cast<long>(take);
    };
    chunked = std::make_unique<storage::AwsChunkedDecoder>(
        raw, *caller.signed_by, api.tokens.SecretOf(token->id), req.Header("x-amz-date"));
    payload_hash.clear();
  } else if (payload_hash.rfind("STREAMING-", 0) == 0) {
    return S3Error(501, "NotImplemented",
                   "only STREAMING-AWS4-HMAC-SHA256-PAYLOAD streaming payloads are supported");
  }
  std::string expected_sha = IsHex64(payload_hash) ? payload_hash : "";
  std::string xml;
  if (req.method == "POST") {
    if (auto refused = ReadXmlBody(req, chunked.get(), xml)) return std::move(*refused);
    if (!expected_sha.empty() && Sha256Hex(xml) != expected_sha)
      return S3Error(400, "XAmzContentSHA256Mismatch", "the body does not match its SHA-256");
  } else if (!req.body_stream && !expected_sha.empty() && Sha256Hex(req.body) != expected_sha) {
    return S3Error(400, "XAmzContentSHA256Mismatch", "the body does not match its SHA-256");
  }
  const std::string& org = token->org_id;

  // Path style: /<bucket>/<key>.
  std::string rest = req.path.size() > 1 ? req.path.substr(1) : "";
  size_t slash = rest.find('/');
  std::string bucket = rest.substr(0, slash);
  std::string key = slash == std::string::npos ? "" : rest.substr(slash + 1);

  if (bucket.empty()) {
    if (req.method != "GET") return S3Error(405, "MethodNotAllowed", "only GET lists buckets");
    return ListBuckets(org);
  }
  if (bucket != kGatewayBucket)
    return S3Error(404, "NoSuchBucket",
                   "the only bucket is \"" + std::string(kGatewayBucket) + "\"", bucket);
  const S3Call call{req, api.objects, org, key, chunked.get(), expected_sha, xml};
  if (key.empty()) return BucketCall(call);
  if (Status st = storage::ValidateObjectKey(key); !st.ok())
    return S3Error(400, "InvalidArgument", st.message(), key);
  return CountedStream(api, org, ObjectCall(call));
}

}  // namespace
}  // namespace s3

HttpResponse StorageGateway::Handle(const HttpRequest& req) { return s3::Serve(api_, req); }

}  // namespace adapt::api
