// Presigned-query SigV4 and aws-chunked decoding against the worked examples AWS publishes for
// S3 (secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, 2013-05-24), so a pass means the
// signatures match the real service, not merely themselves.
#include "storage/aws_chunked.h"

#include <gtest/gtest.h>

#include <map>

namespace adapt::storage {
namespace {

constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr const char* kSeed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
constexpr const char* kChunk1 = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";
constexpr const char* kChunk2 = "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497";
constexpr const char* kFinal = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9";

SigV4Authorization ExampleAuth() {
  SigV4Authorization a;
  a.access_key = "AKIAIOSFODNN7EXAMPLE";
  a.date = "20130524";
  a.region = "us-east-1";
  a.service = "s3";
  a.signature = kSeed;
  return a;
}

std::string ExampleBody(const std::string& second_signature = kChunk2) {
  std::string body =
      "10000;chunk-signature=" + std::string(kChunk1) + "\r\n" + std::string(65536, 'a') + "\r\n";
  body += "400;chunk-signature=" + second_signature + "\r\n" + std::string(1024, 'a') + "\r\n";
  body += "0;chunk-signature=" + std::string(kFinal) + "\r\n\r\n";
  return body;
}

ObjectSource FromString(std::string s, size_t step) {
  auto off = std::make_shared<size_t>(0);
  return [s = std::move(s), off, step](char* buf, size_t n) -> long {
    size_t take = std::min({n, step, s.size() - *off});
    std::copy_n(s.data() + *off, take, buf);
    *off += take;
    return static_cast<long>(take);
  };
}

// Reads everything; returns false when the decoder failed.
bool Drain(AwsChunkedDecoder& d, std::string& out, size_t n = 4096) {
  std::vector<char> buf(n);
  for (;;) {
    long got = d.Read(buf.data(), buf.size());
    if (got < 0) return false;
    if (got == 0) return true;
    out.append(buf.data(), static_cast<size_t>(got));
  }
}

TEST(AwsChunked, DecodesAndVerifiesAwsExample) {
  // Raw reads of odd sizes split headers and CRLFs across reads.
  for (size_t step : {size_t{1} << 20, size_t{7}, size_t{4099}}) {
    AwsChunkedDecoder d(FromString(ExampleBody(), step), ExampleAuth(), kSecret,
                        "20130524T000000Z");
    std::string out;
    ASSERT_TRUE(Drain(d, out, 1000)) << d.status().message();
    EXPECT_EQ(out, std::string(66560, 'a'));
    EXPECT_EQ(d.decoded_bytes(), 66560u);
  }
}

TEST(AwsChunked, WrongChunkSignatureOrBytesOrCutShortFail) {
  std::string wrong = kChunk2;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  AwsChunkedDecoder bad_sig(FromString(ExampleBody(wrong), 1 << 20), ExampleAuth(), kSecret,
                            "20130524T000000Z");
  std::string out;
  EXPECT_FALSE(Drain(bad_sig, out));
  EXPECT_EQ(bad_sig.status().code(), Code::kPermissionDenied);

  std::string body = ExampleBody();
  body[body.find("\r\n") + 2 + 100] = 'b';  // one byte of the first chunk changed
  AwsChunkedDecoder bad_bytes(FromString(body, 1 << 20), ExampleAuth(), kSecret,
                              "20130524T000000Z");
  out.clear();
  EXPECT_FALSE(Drain(bad_bytes, out));
  EXPECT_EQ(bad_bytes.status().code(), Code::kPermissionDenied);

  // The final chunk missing: cut short, not a success.
  body = ExampleBody();
  body.resize(body.find("0;chunk-signature"));
  AwsChunkedDecoder cut(FromString(body, 1 << 20), ExampleAuth(), kSecret, "20130524T000000Z");
  out.clear();
  EXPECT_FALSE(Drain(cut, out));
  EXPECT_EQ(cut.status().code(), Code::kInvalidArgument);

  AwsChunkedDecoder junk(FromString("zz;chunk-signature=00\r\n", 1 << 20), ExampleAuth(), kSecret,
                         "20130524T000000Z");
  out.clear();
  EXPECT_FALSE(Drain(junk, out));
}

TEST(SigV4Presigned, MatchesAwsExampleAndLeavesTheSignatureOut) {
  const std::string raw =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
      "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
      "SignedHeaders=host&X-Amz-Signature="
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
  std::map<std::string, std::string> query = {
      {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
      {"X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"},
      {"X-Amz-Date", "20130524T000000Z"},
      {"X-Amz-Expires", "86400"},
      {"X-Amz-SignedHeaders", "host"},
      {"X-Amz-Signature", "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"}};
  auto auth = ParseSigV4Query(query);
  ASSERT_TRUE(auth.ok()) << auth.status().message();
  EXPECT_EQ(auth->access_key, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(auth->expires_seconds, 86400);
  std::map<std::string, std::string> headers = {{"host", "examplebucket.s3.amazonaws.com"}};
  SigV4Request req{"GET", "/test.txt", raw, &headers, "UNSIGNED-PAYLOAD", auth->amz_date, true};
  EXPECT_EQ(SigV4Signature(*auth, req, kSecret), auth->signature);

  query["X-Amz-Expires"] = "604801";
  EXPECT_FALSE(ParseSigV4Query(query).ok());
  query["X-Amz-Expires"] = "-5";
  EXPECT_FALSE(ParseSigV4Query(query).ok());
  query["X-Amz-Expires"] = "60";
  query["X-Amz-Algorithm"] = "AWS4-HMAC-SHA1";
  EXPECT_FALSE(ParseSigV4Query(query).ok());
}

}  // namespace
}  // namespace adapt::storage
