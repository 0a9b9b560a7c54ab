#include "agent/release_stream.h"

#include <zstd.h>

#include <cstring>

namespace adapt::agent {
namespace {

constexpr size_t kChunk = 128 * 1024;
constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
// Frames whose window needs more memory than this are refused: a small release never does.
constexpr int kMaxWindowLog = 27;  // 128 MiB

std::string TooLarge(uint64_t max) {
  return "the release unpacks to more than " + std::to_string(max) + " bytes";
}

}  // namespace

ReleaseCompressor::ReleaseCompressor(ByteSource tar, uint64_t max_unpacked, int level)
    : tar_(std::move(tar)), max_unpacked_(max_unpacked), cctx_(ZSTD_createCCtx()), in_(kChunk) {
  if (cctx_) ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_compressionLevel, level);
}

ReleaseCompressor::~ReleaseCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

long ReleaseCompressor::Fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return -1;
}

long ReleaseCompressor::Read(char* buf, size_t n) {
  if (!error_.empty()) return -1;
  if (!cctx_) return Fail("zstd could not allocate its compression context");
  ZSTD_outBuffer out{buf, n, 0};
  while (out.pos == 0 && !done_) {
    if (in_pos_ == in_size_ && !eof_) {
      long got = tar_(in_.data(), in_.size());
      if (got < 0) return Fail("reading the archive failed");
      if (got == 0) eof_ = true;
      in_pos_ = 0;
      in_size_ = static_cast<size_t>(got);
      unpacked_ += in_size_;
      if (unpacked_ > max_unpacked_) return Fail(TooLarge(max_unpacked_));
    }
    ZSTD_inBuffer in{in_.data(), in_size_, in_pos_};
    size_t left = ZSTD_compressStream2(static_cast<ZSTD_CCtx*>(cctx_), &out, &in,
                                       eof_ ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left)) return Fail(std::string("zstd: ") + ZSTD_getErrorName(left));
    in_pos_ = in.pos;
    if (eof_ && left == 0) done_ = true;
  }
  return static_cast<long>(out.pos);
}

ReleaseUnpacker::ReleaseUnpacker(ByteSource stored, uint64_t max_unpacked)
    : stored_(std::move(stored)), max_unpacked_(max_unpacked), in_(kChunk) {}

ReleaseUnpacker::~ReleaseUnpacker() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_)); }

long ReleaseUnpacker::Fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return -1;
}

// Moves what is left of the input to the front and reads more after it.
bool ReleaseUnpacker::Refill() {
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, in_size_ - in_pos_);
    in_size_ -= in_pos_;
    in_pos_ = 0;
  }
  long got = stored_(in_.data() + in_size_, in_.size() - in_size_);
  if (got < 0) return Fail("reading the release failed"), false;
  if (got == 0) eof_ = true;
  in_size_ += static_cast<size_t>(got);
  return true;
}

long ReleaseUnpacker::Read(char* buf, size_t n) {
  if (!error_.empty()) return -1;
  if (!started_) {
    started_ = true;
    while (in_size_ < sizeof kZstdMagic && !eof_)
      if (!Refill()) return -1;
    if (in_size_ >= sizeof kZstdMagic && std::memcmp(in_.data(), kZstdMagic, 4) == 0) {
      dctx_ = ZSTD_createDCtx();
      if (!dctx_) return Fail("zstd could not allocate its decompression context");
      ZSTD_DCtx_setParameter(static_cast<ZSTD_DCtx*>(dctx_), ZSTD_d_windowLogMax, kMaxWindowLog);
    }
  }
  long produced = 0;
  if (!dctx_) {
    // A plain tar: what was read ahead first, then the source itself.
    if (in_pos_ < in_size_) {
      size_t k = std::min(n, in_size_ - in_pos_);
      std::memcpy(buf, in_.data() + in_pos_, k);
      in_pos_ += k;
      produced = static_cast<long>(k);
    } else {
      produced = eof_ ? 0 : stored_(buf, n);
      if (produced < 0) return Fail("reading the release failed");
    }
  } else {
    ZSTD_outBuffer out{buf, n, 0};
    for (;;) {
      if (in_pos_ == in_size_ && !eof_ && !Refill()) return -1;
      ZSTD_inBuffer in{in_.data(), in_size_, in_pos_};
      size_t hint = ZSTD_decompressStream(static_cast<ZSTD_DCtx*>(dctx_), &out, &in);
      if (ZSTD_isError(hint))
        return Fail(std::string("the release is not valid zstd: ") + ZSTD_getErrorName(hint));
      const bool moved = in.pos != in_pos_ || out.pos > 0;
      in_pos_ = in.pos;
      if (moved) pending_ = hint;
      if (out.pos > 0) break;
      if (in_pos_ == in_size_ && eof_) {
        if (pending_ != 0) return Fail("the release's zstd frame is truncated");
        break;
      }
    }
    produced = static_cast<long>(out.pos);
  }
  unpacked_ += static_cast<uint64_t>(produced);
  if (unpacked_ > max_unpacked_) return Fail(TooLarge(max_unpacked_));
  return produced;
}

}  // namespace adapt::agent
