#include "net/pg_backend_key.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt::net {
namespace {

using namespace std::string_literals;

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string ServerMessage(char type, const std::string& body) {
  return std::string(1, type) + Be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

std::string AuthRequest(uint32_t code, const std::string& more = "") {
  return ServerMessage('R', Be32(code) + more);
}

std::string ParamStatus(const std::string& k, const std::string& v) {
  return ServerMessage('S', k + std::string(1, '\0') + v + std::string(1, '\0'));
}

std::string KeyData(uint32_t pid, uint32_t secret) {
  return ServerMessage('K', Be32(pid) + Be32(secret));
}

const std::string kReadyIdle = ServerMessage('Z', "I");

// What PostgreSQL 15 sends after a StartupMessage with scram-sha-256.
std::string ScramStartup(uint32_t pid, uint32_t secret) {
  return AuthRequest(10, "SCRAM-SHA-256" + std::string(2, '\0')) +
         AuthRequest(11, "r=abc,s=c2FsdA==,i=4096") + AuthRequest(12, "v=c2lnbmF0dXJl") +
         AuthRequest(0) + ParamStatus("server_version", "15.8") +
         ParamStatus("client_encoding", "UTF8") + KeyData(pid, secret) + kReadyIdle;
}

TEST(BackendKeyScanner, ReadsTheKeyOfASessionThatAuthenticatedAndIsReady) {
  BackendKeyScanner s;
  s.Feed(ScramStartup(4242, 0xdeadbeef));
  ASSERT_EQ(s.state(), BackendKeyScanner::State::kReady);
  ASSERT_TRUE(s.key());
  EXPECT_EQ(*s.key(), (BackendKey{4242, 0xdeadbeef}));
}

TEST(BackendKeyScanner, FramingSplitAnywhereAcrossReadsGivesTheSameKey) {
  std::string all = ScramStartup(7, 0x01020304) + ServerMessage('T', "row description after ready");
  for (size_t chunk : {1, 2, 3, 5, 7, 13}) {
    BackendKeyScanner s;
    for (size_t at = 0; at < all.size(); at += chunk) {
      s.Feed(std::string_view(all).substr(at, chunk));
      if (at + chunk < all.find(kReadyIdle)) {
        EXPECT_EQ(s.state(), BackendKeyScanner::State::kScanning) << chunk << " " << at;
      }
    }
    ASSERT_EQ(s.state(), BackendKeyScanner::State::kReady) << chunk;
    EXPECT_EQ(*s.key(), (BackendKey{7, 0x01020304})) << chunk;
  }
}

TEST(BackendKeyScanner, NoKeyUntilReadyForQuery) {
  BackendKeyScanner s;
  s.Feed(AuthRequest(0) + KeyData(1, 2));
  EXPECT_EQ(s.state(), BackendKeyScanner::State::kScanning);
  EXPECT_FALSE(s.key());
  s.Feed(kReadyIdle);
  EXPECT_EQ(*s.key(), (BackendKey{1, 2}));
}

TEST(BackendKeyScanner, AKeyBeforeAuthenticationEndsIsNotTheSessions) {
  // A 'K' before AuthenticationOk, or a SASL step that only starts with a zero code, is not it.
  BackendKeyScanner s;
  s.Feed(AuthRequest(10, "SCRAM-SHA-256" + std::string(2, '\0')) + KeyData(1, 2) +
         AuthRequest(0, "xx") + KeyData(3, 4));
  s.Feed(AuthRequest(0) + kReadyIdle);
  ASSERT_EQ(s.state(), BackendKeyScanner::State::kReady);
  EXPECT_FALSE(s.key());
  // ReadyForQuery before authentication is not a start-up at all.
  BackendKeyScanner early;
  early.Feed(KeyData(1, 2) + kReadyIdle);
  EXPECT_EQ(early.state(), BackendKeyScanner::State::kStopped);
  EXPECT_FALSE(early.key());
}

TEST(BackendKeyScanner, AnErrorBeforeReadyStopsWithNoKey) {
  BackendKeyScanner s;
  s.Feed(AuthRequest(10, "SCRAM-SHA-256" + std::string(2, '\0')) +
         ServerMessage('E', "SFATAL\0C28P01\0Mpassword authentication failed\0\0"s) +
         AuthRequest(0) + KeyData(1, 2) + kReadyIdle);
  EXPECT_EQ(s.state(), BackendKeyScanner::State::kStopped);
  EXPECT_FALSE(s.key());
}

TEST(BackendKeyScanner, AHugeOrTooShortLengthStopsWithoutReadingOn) {
  BackendKeyScanner huge;
  huge.Feed(AuthRequest(0) + std::string(1, 'N') + Be32(0xfffffff0u) + "notice" + KeyData(1, 2) +
            kReadyIdle);
  EXPECT_EQ(huge.state(), BackendKeyScanner::State::kStopped);
  EXPECT_FALSE(huge.key());
  BackendKeyScanner just_over;
  just_over.Feed(AuthRequest(0) + std::string(1, 'N') + Be32(kMaxStartupReplyMessage + 5));
  EXPECT_EQ(just_over.state(), BackendKeyScanner::State::kStopped);
  BackendKeyScanner shorter;
  shorter.Feed(AuthRequest(0) + std::string(1, 'S') + Be32(3) + KeyData(1, 2) + kReadyIdle);
  EXPECT_EQ(shorter.state(), BackendKeyScanner::State::kStopped);
}

TEST(BackendKeyScanner, UnknownTypesAndLongNoticesAreSkippedByTheirLength) {
  BackendKeyScanner s;
  // A body that holds what looks like a 'K' and a 'Z' is still one message.
  std::string inner = KeyData(9, 9) + kReadyIdle;
  s.Feed(AuthRequest(0) + ServerMessage('v', Be32(0) + Be32(1) + "x") + ServerMessage('?', inner) +
         ServerMessage('N', std::string(100000, 'n')) + ServerMessage('x', "") + KeyData(5, 6) +
         kReadyIdle);
  ASSERT_EQ(s.state(), BackendKeyScanner::State::kReady);
  EXPECT_EQ(*s.key(), (BackendKey{5, 6}));
}

TEST(BackendKeyScanner, OnlyTheFirstWellFormedKeyCountsAndNothingAfterReady) {
  BackendKeyScanner s;
  s.Feed(AuthRequest(0) + ServerMessage('K', Be32(1)) + KeyData(5, 6) + KeyData(7, 8) + kReadyIdle +
         KeyData(9, 9) + kReadyIdle);
  ASSERT_EQ(s.state(), BackendKeyScanner::State::kReady);
  EXPECT_EQ(*s.key(), (BackendKey{5, 6}));
}

}  // namespace
}  // namespace adapt::net
