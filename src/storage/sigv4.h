// AWS Signature Version 4 (header form), as the storage gateway checks it: the canonical
// request is rebuilt from the request as received and signed with the token's secret.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"

namespace adapt::storage {

struct SigV4Authorization {
  std::string access_key;  // the storage token id
  std::string date;        // yyyymmdd
  std::string region;
  std::string service;
  std::string signed_headers;  // "host;x-amz-date;..."
  std::string signature;       // hex
  // Presigned (query) form only: X-Amz-Date and X-Amz-Expires.
  std::string amz_date;
  int64_t expires_seconds = 0;
};

// Parses "AWS4-HMAC-SHA256 Credential=.../date/region/service/aws4_request,
// SignedHeaders=..., Signature=...".
Result<SigV4Authorization> ParseSigV4Authorization(const std::string& header);

// Parses the presigned-URL form (`aws s3 presign`): X-Amz-Algorithm, X-Amz-Credential,
// X-Amz-Date, X-Amz-Expires (1..604800), X-Amz-SignedHeaders and X-Amz-Signature in the
// (percent-decoded) query.
Result<SigV4Authorization> ParseSigV4Query(const std::map<std::string, std::string>& query);

struct SigV4Request {
  std::string method;
  std::string path;                                             // percent-decoded
  std::string raw_query;                                        // as sent, without '?'
  const std::map<std::string, std::string>* headers = nullptr;  // lower-case names
  std::string payload_hash;   // x-amz-content-sha256 (or UNSIGNED-PAYLOAD)
  std::string amz_date = "";  // when set, instead of the x-amz-date header (presigned form)
  bool presigned = false;     // X-Amz-Signature is left out of the canonical query
};

// The expected hex signature of `request` under `secret`.
std::string SigV4Signature(const SigV4Authorization& auth, const SigV4Request& request,
                           const std::string& secret);
// "yyyymmdd/region/service/aws4_request".
std::string SigV4Scope(const SigV4Authorization& auth);
// The raw signing key: HMAC chain of the secret over date, region, service, "aws4_request".
std::string SigV4SigningKey(const SigV4Authorization& auth, const std::string& secret);
// The first x-amz-* header in `headers` (lower-case names) that `auth`'s SignedHeaders leave
// out, or "" when there is none. Such a header would change what a signed request does
// (x-amz-copy-source turns a presigned PUT into a copy of any object) without the signer's
// consent, so the gateway refuses the request, as S3 does. x-amz-date and x-amz-content-sha256
// are exempt: the signature covers them without listing them (the string to sign, the
// canonical request's payload hash), and a presigned URL's request ignores both.
std::string UnsignedAmzHeader(const SigV4Authorization& auth,
                              const std::map<std::string, std::string>& headers);
// Seconds since the epoch of an x-amz-date "20130524T000000Z"; -1 when malformed.
int64_t ParseAmzDate(const std::string& text);

}  // namespace adapt::storage
