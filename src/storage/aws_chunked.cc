#include "storage/aws_chunked.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/constant_time.h"
#include "base/hex.h"
#include "base/ids.h"

namespace adapt::storage {
namespace {

constexpr size_t kMaxHeaderLine = 4096;
constexpr size_t kFillBytes = 64 * 1024;
constexpr uint64_t kMaxChunkBytes = 64ull << 20;  // SDKs send 8 KiB..8 MiB chunks

}  // namespace

AwsChunkedDecoder::AwsChunkedDecoder(ObjectSource raw, const SigV4Authorization& auth,
                                     const std::string& secret, std::string amz_date)
    : raw_(std::move(raw)),
      signing_key_(SigV4SigningKey(auth, secret)),
      scope_(SigV4Scope(auth)),
      amz_date_(std::move(amz_date)),
      previous_signature_(auth.signature) {}

long AwsChunkedDecoder::Fail(Code code, const std::string& why) {
  state_ = State::kFailed;
  status_ = Status(code, why);
  return -1;
}

bool AwsChunkedDecoder::Fill() {
  if (in_pos_ > 0) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
  const size_t have = in_.size();
  in_.resize(have + kFillBytes);
  long n = raw_(in_.data() + have, kFillBytes);
  in_.resize(have + static_cast<size_t>(std::max(n, 0L)));
  return n > 0;
}

bool AwsChunkedDecoder::ReadLine(std::string& line) {
  for (;;) {
    size_t end = in_.find("\r\n", in_pos_);
    if (end != std::string::npos) {
      line = in_.substr(in_pos_, end - in_pos_);
      in_pos_ = end + 2;
      return true;
    }
    if (in_.size() - in_pos_ > kMaxHeaderLine || !Fill()) return false;
  }
}

// Checks the chunk that just ended against its signature; the next one chains from it.
bool AwsChunkedDecoder::FinishChunk() {
  std::string sha, md5;
  hash_->Finish(sha, md5);
  const std::string to_sign = "AWS4-HMAC-SHA256-PAYLOAD\n" + amz_date_ + "\n" + scope_ + "\n" +
                              previous_signature_ + "\n" + Sha256Hex("") + "\n" + sha;
  const std::string want = HexEncode(HmacSha256(signing_key_, to_sign));
  if (!ConstantTimeEquals(want, chunk_signature_)) return false;
  previous_signature_ = chunk_signature_;
  return true;
}

long AwsChunkedDecoder::Read(char* buf, size_t n) {
  for (;;) {
    switch (state_) {
      case State::kDone:
        return 0;
      case State::kFailed:
        return -1;
      case State::kHeader: {
        std::string line;
        if (!ReadLine(line))
          return Fail(Code::kInvalidArgument, "the aws-chunked body was cut short");
        // "<hex size>;chunk-signature=<64 hex>"
        const size_t semi = line.find(';');
        const std::string size_hex = line.substr(0, semi);
        const std::string kSig = "chunk-signature=";
        if (semi == std::string::npos || size_hex.empty() || size_hex.size() > 16 ||
            line.compare(semi + 1, kSig.size(), kSig) != 0 ||
            !std::all_of(size_hex.begin(), size_hex.end(), ::isxdigit))
          return Fail(Code::kInvalidArgument, "malformed aws-chunked chunk header");
        remaining_ = std::stoull(size_hex, nullptr, 16);
        if (remaining_ > kMaxChunkBytes)
          return Fail(Code::kInvalidArgument, "an aws-chunked chunk is larger than 64 MiB");
        chunk_signature_ = line.substr(semi + 1 + kSig.size());
        last_chunk_ = remaining_ == 0;
        hash_ = std::make_unique<ObjectHasher>();
        state_ = State::kData;
        break;
      }
      case State::kData: {
        if (remaining_ > 0) {
          if (in_pos_ == in_.size() && !Fill())
            return Fail(Code::kInvalidArgument, "the aws-chunked body was cut short");
          const size_t take = static_cast<size_t>(
              std::min<uint64_t>({remaining_, n, static_cast<uint64_t>(in_.size() - in_pos_)}));
          std::memcpy(buf, in_.data() + in_pos_, take);
          hash_->Update(buf, take);
          in_pos_ += take;
          remaining_ -= take;
          decoded_ += take;
          return static_cast<long>(take);
        }
        std::string crlf;
        if (!ReadLine(crlf) || !crlf.empty())
          return Fail(Code::kInvalidArgument,
                      "malformed aws-chunked body: a chunk must end in CRLF");
        if (!FinishChunk())
          return Fail(Code::kPermissionDenied,
                      "an aws-chunked chunk signature does not match the storage token's secret");
        state_ = last_chunk_ ? State::kDone : State::kHeader;
        break;
      }
    }
  }
}

}  // namespace adapt::storage
