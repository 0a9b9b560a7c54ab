#include "net/dns_message.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace adapt::net {
namespace {

std::vector<uint8_t> Query(const std::string& name, uint16_t type = 1, uint16_t id = 0x1234) {
  std::vector<uint8_t> q = {
      static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q.push_back(static_cast<uint8_t>(dot - start));
    q.insert(q.end(), name.begin() + static_cast<long>(start),
             name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.push_back(0);
  q.insert(q.end(), {static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0, 1});
  return q;
}

TEST(DnsMessage, ParsesTheQuestionInLowerCase) {
  auto q = ParseDnsQuery(Query("API.Example.com", 28));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->name, "api.example.com");
  EXPECT_EQ(q->type, 28);
  EXPECT_EQ(q->id, 0x1234);
  EXPECT_EQ(q->end, Query("API.Example.com").size());
}

TEST(DnsMessage, RefusesWhatIsNotOneStandardQuestion) {
  auto q = Query("a.example.com");
  for (size_t n = 0; n < q.size(); ++n) EXPECT_FALSE(ParseDnsQuery(std::span(q.data(), n))) << n;
  auto response = q;
  response[2] |= 0x80;
  EXPECT_FALSE(ParseDnsQuery(response));
  auto two = q;
  two[5] = 2;
  EXPECT_FALSE(ParseDnsQuery(two));
  auto pointer = q;
  pointer[12] = 0xC0;
  EXPECT_FALSE(ParseDnsQuery(pointer));
}

TEST(DnsMessage, ErrorReplyKeepsIdAndQuestion) {
  auto query = Query("b.example.com");
  auto q = ParseDnsQuery(query);
  ASSERT_TRUE(q);
  auto r = DnsErrorReply(query, *q, kDnsNxDomain);
  ASSERT_EQ(r.size(), query.size());
  EXPECT_EQ(r[0], 0x12);
  EXPECT_EQ(r[1], 0x34);
  EXPECT_EQ(r[2] & 0x80, 0x80);
  EXPECT_EQ(r[3] & 0x0F, kDnsNxDomain);
  EXPECT_EQ(r[7], 0);  // no answers
  EXPECT_TRUE(std::equal(query.begin() + 12, query.end(), r.begin() + 12));
}

std::vector<uint8_t> Answer(uint16_t id) {
  auto r = Query("c.example.com", 1, id);
  r[2] = 0x81, r[3] = 0x80, r[7] = 3;  // three answers
  // CNAME c.example.com -> cdn (compressed pointer to the question), then A and AAAA.
  r.insert(r.end(), {0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xC0, 12});
  r.insert(r.end(), {0xC0, 12, 0, 1, 0, 1, 0, 0, 1, 0, 0, 4, 198, 51, 100, 7});
  r.insert(r.end(), {0xC0, 12,   0, 28, 0, 1, 0, 0, 0, 30, 0, 16, 0x20, 0x01,
                     0x0d, 0xb8, 0, 0,  0, 0, 0, 0, 0, 0,  0, 0,  0,    1});
  return r;
}

TEST(DnsMessage, ReadsAAndAaaaAnswers) {
  auto a = ParseDnsAnswers(Answer(7), 7);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].ip.text, "198.51.100.7");
  EXPECT_EQ((*a)[0].ttl, 256u);
  EXPECT_EQ((*a)[1].ip.text, "2001:db8::1");
  EXPECT_FALSE(ParseDnsAnswers(Answer(7), 8));  // another id
}

TEST(DnsMessage, TruncatedOrGarbledAnswersNeverReadOutOfBounds) {
  auto full = Answer(9);
  for (size_t n = 0; n < full.size(); ++n)
    EXPECT_FALSE(ParseDnsAnswers(std::span(full.data(), n), 9)) << n;
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    auto b = full;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    ParseDnsAnswers(b, 9);
    ParseDnsQuery(b);
  }
}

TEST(DnsMessage, UdpLimitIsTheEdnsSizeElse512) {
  auto plain = Query("c.example.com");
  auto q = ParseDnsQuery(plain);
  ASSERT_TRUE(q);
  EXPECT_EQ(DnsUdpLimit(plain, *q), 512u);
  EXPECT_FALSE(DnsTruncated(plain));
  auto edns = plain;
  edns[11] = 1;  // one additional record: OPT, payload 1232
  edns.insert(edns.end(), {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0});
  q = ParseDnsQuery(edns);
  ASSERT_TRUE(q);
  EXPECT_EQ(DnsUdpLimit(edns, *q), 1232u);
  edns[q->end + 3] = 0xFF, edns[q->end + 4] = 0xFF;
  EXPECT_EQ(DnsUdpLimit(edns, *q), 4096u);
  edns[q->end + 3] = 0, edns[q->end + 4] = 1;
  EXPECT_EQ(DnsUdpLimit(edns, *q), 512u);
}

TEST(DnsMessage, AddressReplyHoldsWhatFitsOfTheQuestionsType) {
  auto query = Query("d.example.com", 1, 0x0102);
  auto q = ParseDnsQuery(query);
  ASSERT_TRUE(q);
  std::vector<DnsAddress> addresses;
  for (int i = 0; i < 10; ++i) addresses.push_back({*ParseIp("192.0.2." + std::to_string(i)), 30});
  addresses.push_back({*ParseIp("2001:db8::1"), 30});  // not an A record: left out
  auto all = DnsAddressReply(query, *q, addresses, 512);
  EXPECT_FALSE(DnsTruncated(all));
  auto parsed = ParseDnsAnswers(all, 0x0102);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 10u);
  EXPECT_EQ((*parsed)[3].ip.text, "192.0.2.3");
  EXPECT_EQ((*parsed)[3].ttl, 30u);
  auto three = DnsAddressReply(query, *q, addresses, query.size() + 3 * 16 + 15);
  parsed = ParseDnsAnswers(three, 0x0102);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->size(), 3u);
  auto v6 = ParseDnsQuery(Query("d.example.com", 28, 0x0102));
  parsed = ParseDnsAnswers(DnsAddressReply(query, *v6, addresses, 512), 0x0102);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].ip.text, "2001:db8::1");
}

}  // namespace
}  // namespace adapt::net
