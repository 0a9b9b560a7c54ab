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
};

// Parses "AWS4-HMAC-SHA256 Credential=.../date/region/service/aws4_request,
// SignedHeaders=..., Signature=...".
Result<SigV4Authorization> ParseSigV4Authorization(const std::string& header);

struct SigV4Request {
  std::string method;
  std::string path;                                             // percent-decoded
  std::string raw_query;                                        // as sent, without '?'
  const std::map<std::string, std::string>* headers = nullptr;  // lower-case names
  std::string payload_hash;  // x-amz-content-sha256 (or UNSIGNED-PAYLOAD)
};

// The expected hex signature of `request` under `secret`.
std::string SigV4Signature(const SigV4Authorization& auth, const SigV4Request& request,
                           const std::string& secret);
// S3's URI encoding: everything but A-Z a-z 0-9 - _ . ~ (and '/' when `keep_slash`).
std::string AwsUriEncode(const std::string& s, bool keep_slash);
// Seconds since the epoch of an x-amz-date "20130524T000000Z"; -1 when malformed.
int64_t ParseAmzDate(const std::string& text);

}  // namespace adapt::storage
