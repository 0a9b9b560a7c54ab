// What the storage gateway's handlers share (s3_gateway.cc, s3_multipart.cc): one S3 call as
// the handlers see it, S3's XML error and success answers, and the request's query and body.
// Internal to the gateway: in namespace s3, so that these short names never meet the
// anonymous helpers of another api/ file compiled in the same unity batch.
#pragma once

#include <string>

#include "api/http_types.h"
#include "base/status.h"
#include "storage/aws_chunked.h"
#include "storage/object_store.h"

namespace adapt::api::s3 {

// One S3 call on the bucket or on one of its objects, its caller authenticated.
struct S3Call {
  const HttpRequest& req;
  storage::ObjectStore& objects;
  const std::string& org;
  const std::string& key;               // empty for a call on the bucket
  storage::AwsChunkedDecoder* chunked;  // an aws-chunked body, checked as it streams; or null
  const std::string& expected_sha;      // the body's declared SHA-256 (hex), or empty
  // A POST's XML body (DeleteObjects, CompleteMultipartUpload), read whole once its caller was
  // authenticated; empty for the other methods, whose bodies stream or are not read.
  const std::string& body;
};

// How S3 answers a failure: the HTTP status, S3's error code, and the message a tenant may read.
struct S3Failure {
  int status = 500;
  std::string code;
  std::string message;
};

// S3's <Error> document with `code` and `message` (escaped), about `resource`.
HttpResponse S3Error(int status, const std::string& code, const std::string& message,
                     const std::string& resource = "");
// What a tenant reads of `st`: its message, or for an internal failure (whose message is
// adaptd's and may name host paths) a fixed sentence, the message going to adaptd's log.
std::string PublicMessage(const Status& st);
// A failed Status as S3 reports it: `not_found` names what a kNotFound is (NoSuchKey,
// NoSuchUpload); an internal failure is InternalError with PublicMessage's fixed sentence.
S3Failure FailureOf(const Status& st, const char* not_found = "NoSuchKey");
// FailureOf(st) as S3's <Error> document about `resource`.
HttpResponse FromStatus(const Status& st, const std::string& resource,
                        const char* not_found = "NoSuchKey");
// An aws-chunked body that failed as it streamed: a bad chunk signature or a broken body.
HttpResponse ChunkedError(const Status& st, const std::string& key);
// `body` (an XML element) as an XML document.
HttpResponse Xml(int status, const std::string& body);
// No body, no content type.
HttpResponse Empty(int status);

// Whether the query has `name` (S3's flags, like `?uploads`, have no value).
bool Has(const HttpRequest& req, const std::string& name);
// The query's `name`, or "".
std::string Q(const HttpRequest& req, const std::string& name);

// The request's body (streamed or buffered) as an ObjectSource; `off` is its read position in
// a buffered body and must outlive the source, as must `req`.
storage::ObjectSource BodySource(const HttpRequest& req, size_t& off);

}  // namespace adapt::api::s3
