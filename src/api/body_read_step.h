// When a streamed request body's read hands its bytes to the handler. Each hand-over costs
// two thread wake-ups (the handler's worker asks the connection's strand, the strand answers),
// and one socket read brings at most 64 KiB (Beast's read size), so handing over after every
// socket read made a large upload pay the wake-ups every 64 KiB: on a loaded 2-core machine
// that, not the disk or the hashing, bounded the storage gateway's PUT (bench/README.md,
// "storage"). A read therefore goes on filling the handler's buffer while the client's bytes
// are already waiting in the socket, and hands over as soon as none are: a slow client is still
// judged by its rate, never made to fill the buffer.
#pragma once

#include <cstddef>

namespace adapt::api {

enum class BodyReadStep {
  kDeliver,   // hand the bytes read so far (0 at the body's end) to the handler
  kReadMore,  // read the socket again into the rest of the buffer
};

// After a socket read: `filled` of the `wanted` bytes asked for are in the buffer, `body_done`
// when the body has ended, `waiting` bytes more already sit in the socket.
inline BodyReadStep NextBodyReadStep(size_t filled, size_t wanted, bool body_done, size_t waiting) {
  if (body_done || filled >= wanted) return BodyReadStep::kDeliver;
  // Only framing (a chunk header) was read: 0 would tell the handler the body ended.
  if (filled == 0) return BodyReadStep::kReadMore;
  return waiting > 0 ? BodyReadStep::kReadMore : BodyReadStep::kDeliver;
}

}  // namespace adapt::api
