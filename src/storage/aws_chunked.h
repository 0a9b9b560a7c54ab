// Decoding of aws-chunked request bodies (x-amz-content-sha256:
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD): the body is a series of
// "<hex size>;chunk-signature=<sig>\r\n<bytes>\r\n" ending with a chunk of size 0, and each
// chunk's signature chains from the previous one (the first from the request's own
// signature), so every byte is authenticated before the object is committed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "storage/object_hash.h"
#include "storage/object_store.h"
#include "storage/sigv4.h"

namespace adapt::storage {

constexpr const char* kStreamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";

class AwsChunkedDecoder {
 public:
  // `raw` reads the body as sent; `auth` and `secret` are those that signed the request,
  // `amz_date` its x-amz-date.
  AwsChunkedDecoder(ObjectSource raw, const SigV4Authorization& auth, const std::string& secret,
                    std::string amz_date);

  // An ObjectSource of the decoded bytes: 0 once the final chunk checked out, -1 when the
  // body is malformed, cut short or a chunk's signature is wrong (status() says which).
  long Read(char* buf, size_t n);
  ObjectSource Source() {
    return [this](char* buf, size_t n) { return Read(buf, n); };
  }
  const Status& status() const { return status_; }
  uint64_t decoded_bytes() const { return decoded_; }

 private:
  bool Fill();  // more raw bytes into in_; false at the end of the body
  bool ReadLine(std::string& line);
  long Fail(Code code, const std::string& why);
  bool FinishChunk();

  ObjectSource raw_;
  std::string signing_key_;
  std::string scope_;
  std::string amz_date_;
  std::string previous_signature_;
  std::string in_;
  size_t in_pos_ = 0;
  enum class State { kHeader, kData, kDone, kFailed } state_ = State::kHeader;
  uint64_t remaining_ = 0;
  bool last_chunk_ = false;
  std::string chunk_signature_;
  std::unique_ptr<ObjectHasher> hash_;  // the current chunk's bytes, as they pass
  uint64_t decoded_ = 0;
  Status status_ = Status::Ok();
};

}  // namespace adapt::storage
