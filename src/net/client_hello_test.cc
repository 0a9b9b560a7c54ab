#include "net/client_hello.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <vector>

#include "net/client_hello_test_data.h"

namespace adapt::net {
namespace {

std::vector<uint8_t> Bytes(const uint8_t* b, size_t n) { return {b, b + n}; }

HelloStatus Parse(const std::vector<uint8_t>& b, ClientHello* h) { return ParseClientHello(b, h); }

TEST(ClientHello, ReadsTheServerNameOfRealClients) {
  ClientHello h;
  ASSERT_EQ(Parse(Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello), &h),
            HelloStatus::kOk)
      << h.error;
  EXPECT_EQ(h.server_name, "api.example.com");
  EXPECT_FALSE(h.encrypted);
  ASSERT_EQ(Parse(Bytes(testdata::kOpensslHello, sizeof testdata::kOpensslHello), &h),
            HelloStatus::kOk)
      << h.error;
  EXPECT_EQ(h.server_name, "files.example.org");  // lower-cased
}

TEST(ClientHello, NoServerNameIsAnEmptyName) {
  ClientHello h;
  ASSERT_EQ(Parse(Bytes(testdata::kNoSniHello, sizeof testdata::kNoSniHello), &h),
            HelloStatus::kOk);
  EXPECT_EQ(h.server_name, "");
}

TEST(ClientHello, EveryPrefixNeedsMore) {
  auto full = Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello);
  for (size_t n = 0; n < full.size(); ++n) {
    ClientHello h;
    EXPECT_EQ(Parse({full.begin(), full.begin() + static_cast<long>(n)}, &h),
              HelloStatus::kNeedMore)
        << n;
  }
}

TEST(ClientHello, AHelloSplitOverTwoRecordsIsReassembled) {
  auto full = Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello);
  std::vector<uint8_t> body(full.begin() + 5, full.end());
  size_t half = body.size() / 2;
  std::vector<uint8_t> split;
  for (auto [from, to] : {std::pair<size_t, size_t>{0, half}, {half, body.size()}}) {
    size_t n = to - from;
    split.insert(split.end(), {22, 3, 1, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)});
    split.insert(split.end(), body.begin() + static_cast<long>(from),
                 body.begin() + static_cast<long>(to));
  }
  ClientHello h;
  ASSERT_EQ(Parse(split, &h), HelloStatus::kOk) << h.error;
  EXPECT_EQ(h.server_name, "api.example.com");
}

// The proxy's reader is given everything read so far at each read; a hello in one-byte
// records, arriving a byte at a time, reads as the whole one does.
TEST(ClientHello, AReaderFedAByteAtATimeReadsOneByteRecords) {
  auto full = Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello);
  std::vector<uint8_t> tiny;
  for (size_t i = 5; i < full.size(); ++i) tiny.insert(tiny.end(), {22, 3, 1, 0, 1, full[i]});
  ClientHelloReader reader;
  ClientHello h;
  for (size_t n = 1; n < tiny.size(); ++n)
    ASSERT_EQ(reader.Parse(std::span<const uint8_t>(tiny.data(), n), &h), HelloStatus::kNeedMore)
        << n;
  ASSERT_EQ(reader.Parse(tiny, &h), HelloStatus::kOk) << h.error;
  EXPECT_EQ(h.server_name, "api.example.com");
  // A second reader refuses the same bytes once a record turns out not to be TLS.
  ClientHelloReader other;
  std::vector<uint8_t> bad(tiny.begin(), tiny.begin() + 12);
  bad.insert(bad.end(), {23, 3, 1, 0, 1, 0});
  EXPECT_EQ(other.Parse(std::span<const uint8_t>(bad.data(), 12), &h), HelloStatus::kNeedMore);
  EXPECT_EQ(other.Parse(bad, &h), HelloStatus::kInvalid);
}

TEST(ClientHello, PlaintextAndGarbageAreInvalid) {
  ClientHello h;
  std::string http = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  EXPECT_EQ(Parse({http.begin(), http.end()}, &h), HelloStatus::kInvalid);
  EXPECT_EQ(Parse({'G'}, &h), HelloStatus::kInvalid);
  EXPECT_EQ(Parse({22, 3, 1, 0, 0}, &h), HelloStatus::kInvalid);              // empty record
  EXPECT_EQ(Parse({22, 2, 0, 0, 4, 1, 0, 0, 0}, &h), HelloStatus::kInvalid);  // SSLv2-ish
  EXPECT_EQ(Parse({22, 3, 1, 0, 4, 2, 0, 0, 0}, &h), HelloStatus::kInvalid);  // ServerHello
  // A handshake claiming more than 32 KiB.
  EXPECT_EQ(Parse({22, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff}, &h), HelloStatus::kInvalid);
  // A hello whose body is too short for its fixed fields.
  EXPECT_EQ(Parse({22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3}, &h), HelloStatus::kInvalid);
}

TEST(ClientHello, CorruptedLengthsNeverReadOutOfBounds) {
  auto full = Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello);
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    auto b = full;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    b.resize(rng() % (b.size() + 1));
    ClientHello h;
    HelloStatus st = Parse(b, &h);
    if (st == HelloStatus::kOk && !h.server_name.empty()) {
      for (char c : h.server_name) EXPECT_TRUE(std::isalnum(c) || c == '-' || c == '.') << c;
    }
  }
}

TEST(ClientHello, EncryptedClientHelloIsFlagged) {
  // The Python hello with one more extension: encrypted_client_hello (0xfe0d), empty.
  auto b = Bytes(testdata::kPythonHello, sizeof testdata::kPythonHello);
  // Record length at 3, handshake length at 6 (24 bits); the extensions' length follows the
  // fixed fields (version, random, session id, cipher suites, compression).
  size_t at = 5 + 4 + 2 + 32;
  at += 1 + b[at];
  at += 2 + (b[at] << 8 | b[at + 1]);
  at += 1 + b[at];
  size_t ext_len_at = at;
  std::vector<uint8_t> ech = {0xfe, 0x0d, 0, 0};
  b.insert(b.end(), ech.begin(), ech.end());
  auto bump = [&](size_t pos, int width) {
    uint32_t v = 0;
    for (int i = 0; i < width; ++i) v = v << 8 | b[pos + i];
    v += 4;
    for (int i = width - 1; i >= 0; --i, v >>= 8) b[pos + i] = static_cast<uint8_t>(v);
  };
  bump(3, 2);
  bump(6, 3);
  bump(ext_len_at, 2);
  ClientHello h;
  ASSERT_EQ(Parse(b, &h), HelloStatus::kOk) << h.error;
  EXPECT_TRUE(h.encrypted);
  EXPECT_EQ(h.server_name, "api.example.com");
}

}  // namespace
}  // namespace adapt::net
