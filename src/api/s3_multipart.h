// The storage gateway's multipart upload calls (S3's CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload, AbortMultipartUpload, ListParts, ListMultipartUploads), over
// ObjectStore's uploads of the caller's organization. Internal to the gateway (s3_gateway.cc
// routes to them).
#pragma once

#include "api/s3_responses.h"

namespace adapt::api::s3 {

// POST /objects/<key>?uploads.
HttpResponse CreateMultipartUpload(const S3Call& c);
// PUT /objects/<key>?uploadId=...&partNumber=...
HttpResponse UploadPart(const S3Call& c);
// POST /objects/<key>?uploadId=...
HttpResponse CompleteMultipartUpload(const S3Call& c);
// DELETE /objects/<key>?uploadId=...
HttpResponse AbortMultipartUpload(const S3Call& c);
// GET /objects/<key>?uploadId=...
HttpResponse ListParts(const S3Call& c);
// GET /objects?uploads: the organization's unfinished uploads (prefix, delimiter, key-marker,
// upload-id-marker, max-uploads 1..1000, encoding-type=url), so that clients find and abort
// the ones they left.
HttpResponse ListMultipartUploads(const S3Call& c);

}  // namespace adapt::api::s3
