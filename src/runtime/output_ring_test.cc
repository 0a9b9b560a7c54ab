#include "runtime/output_ring.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt::runtime {
namespace {

constexpr size_t kMax = OutputRing::kMaxBytes;

TEST(OutputRing, KeepsStreamsApartInOrder) {
  OutputRing ring;
  ring.Append(Stream::kStdout, "a1 ");
  ring.Append(Stream::kStderr, "e1 ");
  ring.Append(Stream::kStdout, "a2");
  ring.Append(Stream::kStderr, "e2");
  EXPECT_EQ(ring.Text(Stream::kStdout), "a1 a2");
  EXPECT_EQ(ring.Text(Stream::kStderr), "e1 e2");
  EXPECT_EQ(ring.bytes(), 10u);
  EXPECT_EQ(ring.chunks(), 4u);
  EXPECT_FALSE(ring.truncated());
}

TEST(OutputRing, EmptyAppendIsNotAChunk) {
  OutputRing ring;
  ring.Append(Stream::kStdout, "");
  EXPECT_EQ(ring.chunks(), 0u);
  EXPECT_FALSE(ring.truncated());
}

TEST(OutputRing, ExactlyTheByteLimitIsNotTruncated) {
  OutputRing ring;
  ring.Append(Stream::kStdout, std::string(kMax / 2, 'o'));
  ring.Append(Stream::kStderr, std::string(kMax / 2, 'e'));
  EXPECT_EQ(ring.bytes(), kMax);
  EXPECT_FALSE(ring.truncated());
}

TEST(OutputRing, ByteLimitCountsBothStreamsAndDropsTheOldest) {
  OutputRing ring;
  ring.Append(Stream::kStdout, std::string(200 * 1024, 'o'));
  ring.Append(Stream::kStderr, std::string(100 * 1024, 'e'));
  // 300 KiB in all: the oldest 44 KiB of stdout go, stderr stays whole.
  EXPECT_TRUE(ring.truncated());
  EXPECT_EQ(ring.bytes(), kMax);
  EXPECT_EQ(ring.Text(Stream::kStderr), std::string(100 * 1024, 'e'));
  EXPECT_EQ(ring.Text(Stream::kStdout), std::string(156 * 1024, 'o'));
  EXPECT_EQ(ring.chunks(), 2u);
}

TEST(OutputRing, ByteLimitDropsWholeOldChunksThenTrimsTheNext) {
  OutputRing ring;
  ring.Append(Stream::kStdout, "first-");
  ring.Append(Stream::kStderr, "second-");
  ring.Append(Stream::kStdout, std::string(kMax - 3, 'x'));
  // 6 + 7 + kMax-3 = kMax + 10: "first-" goes whole, then 4 bytes of "second-".
  EXPECT_EQ(ring.bytes(), kMax);
  EXPECT_EQ(ring.Text(Stream::kStderr), "nd-");
  EXPECT_EQ(ring.Text(Stream::kStdout), std::string(kMax - 3, 'x'));
  EXPECT_TRUE(ring.truncated());
}

TEST(OutputRing, ChunkLimitCountsBothStreams) {
  OutputRing ring;
  for (size_t i = 0; i < OutputRing::kMaxChunks; ++i)
    ring.Append(i % 2 ? Stream::kStderr : Stream::kStdout, i % 2 ? "e" : "o");
  EXPECT_EQ(ring.chunks(), OutputRing::kMaxChunks);
  EXPECT_FALSE(ring.truncated());
  ring.Append(Stream::kStderr, "E");
  ring.Append(Stream::kStderr, "F");
  // Two more chunks push out the two oldest, one from each stream.
  EXPECT_EQ(ring.chunks(), OutputRing::kMaxChunks);
  EXPECT_TRUE(ring.truncated());
  EXPECT_EQ(ring.bytes(), OutputRing::kMaxChunks);
  EXPECT_EQ(ring.Text(Stream::kStdout), std::string(OutputRing::kMaxChunks / 2 - 1, 'o'));
  EXPECT_EQ(ring.Text(Stream::kStderr), std::string(OutputRing::kMaxChunks / 2 - 1, 'e') + "EF");
}

TEST(OutputRing, ASingleChunkOverTheLimitKeepsItsTail) {
  OutputRing ring;
  ring.Append(Stream::kStderr, "old");
  std::string big = "HEAD" + std::string(kMax, 'm') + "TAIL";
  ring.Append(Stream::kStdout, big);
  EXPECT_TRUE(ring.truncated());
  EXPECT_EQ(ring.bytes(), kMax);
  EXPECT_EQ(ring.chunks(), 1u);
  EXPECT_EQ(ring.Text(Stream::kStderr), "");
  std::string out = ring.Text(Stream::kStdout);
  ASSERT_EQ(out.size(), kMax);
  EXPECT_EQ(out, big.substr(big.size() - kMax));
  EXPECT_EQ(out.substr(out.size() - 4), "TAIL");
}

TEST(OutputRing, SerializeParseRoundTrip) {
  OutputRing ring;
  ring.Append(Stream::kStdout, "hello ");
  ring.Append(Stream::kStderr, std::string("bin\0ary\xff", 8));
  ring.Append(Stream::kStdout, "world");
  auto parsed = OutputRing::Parse(ring.Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->Text(Stream::kStdout), "hello world");
  EXPECT_EQ(parsed->Text(Stream::kStderr), std::string("bin\0ary\xff", 8));
  EXPECT_EQ(parsed->chunks(), 3u);
  EXPECT_EQ(parsed->bytes(), ring.bytes());
  EXPECT_FALSE(parsed->truncated());
  EXPECT_EQ(parsed->Serialize(), ring.Serialize());
}

TEST(OutputRing, SerializeParseKeepsTheTruncatedFlag) {
  OutputRing ring;
  ring.Append(Stream::kStdout, std::string(kMax + 1, 'z'));
  ASSERT_TRUE(ring.truncated());
  auto parsed = OutputRing::Parse(ring.Serialize());
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->truncated());
  EXPECT_EQ(parsed->Text(Stream::kStdout), std::string(kMax, 'z'));
}

TEST(OutputRing, EmptyRingRoundTrips) {
  auto parsed = OutputRing::Parse(OutputRing().Serialize());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->chunks(), 0u);
  EXPECT_FALSE(parsed->truncated());
}

TEST(OutputRing, ParseRejectsCorruptInput) {
  OutputRing ring;
  ring.Append(Stream::kStdout, "hello");
  ring.Append(Stream::kStderr, "world");
  const std::string good = ring.Serialize();

  EXPECT_FALSE(OutputRing::Parse("").ok());
  EXPECT_FALSE(OutputRing::Parse("ADO1").ok()) << "no truncated byte";
  EXPECT_FALSE(OutputRing::Parse("XYZ1" + good.substr(4)).ok()) << "bad magic";
  // Every cut inside a chunk header or its data is detected.
  for (size_t cut = 6; cut < good.size(); ++cut) {
    if (cut == 5 + 5 + 5) continue;  // the boundary after the first chunk is a valid file
    auto r = OutputRing::Parse(good.substr(0, cut));
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInternal);
    }
  }
  std::string bad_tag = good;
  bad_tag[5] = 7;
  EXPECT_FALSE(OutputRing::Parse(bad_tag).ok()) << "unknown stream tag";
  std::string huge_len = good;
  huge_len[6] = '\xff';
  huge_len[7] = '\xff';
  huge_len[8] = '\xff';
  huge_len[9] = '\xff';
  EXPECT_FALSE(OutputRing::Parse(huge_len).ok()) << "length past the end";
}

TEST(OutputRing, ParseReappliesTheLimits) {
  // A file written by hand (or by an older shim) with more than the limits allows.
  std::string data = "ADO1";
  data += '\0';
  for (int i = 0; i < 1100; ++i) {
    data += '\1';
    data += std::string("\1\0\0\0", 4);
    data += 'x';
  }
  auto parsed = OutputRing::Parse(data);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->chunks(), OutputRing::kMaxChunks);
  EXPECT_TRUE(parsed->truncated());
}

}  // namespace
}  // namespace adapt::runtime
