// What CommandRunner makes of a command's raw output: the text of its record (valid UTF-8,
// secrets hidden), the slices a follower reads, and the saves while it runs.
#include <algorithm>
#include <cstdint>
#include <string>

#include "base/ignore_error.h"
#include "base/log.h"
#include "base/redaction.h"
#include "base/text.h"
#include "core/command_runner.h"
#include "core/command_running.h"

namespace adapt::core {
namespace {

// A stream's bytes from a position on, with the bytes just before it that a secret straddling
// that position needs, copied out of the command's buffer (under its lock).
struct StreamSlice {
  std::string bytes;
  size_t context = 0;  // bytes[0..context) come before the position
  bool cut = false;    // bytes before bytes[0] were dropped
  uint64_t end = 0;    // the stream's position after bytes
};

// From `from` (a position in the stream, clamped to the latest kKeptBytesPerStream), out of
// `buffer`, which holds the stream's latest bytes up to `total`; `dropped`: older bytes are gone.
StreamSlice SliceFrom(const std::string& buffer, uint64_t total, bool dropped, uint64_t from,
                      size_t longest_secret) {
  uint64_t buffer_start = total - buffer.size();
  uint64_t kept = std::min<uint64_t>(buffer.size(), CommandRunner::kKeptBytesPerStream);
  size_t at = static_cast<size_t>(std::max(from, total - kept) - buffer_start);
  StreamSlice slice;
  slice.context = std::min(at, longest_secret);
  slice.cut = dropped && slice.context == at;
  slice.bytes = buffer.substr(at - slice.context);
  slice.end = total;
  return slice;
}

// The slice's text (valid UTF-8, secrets hidden). `open`: the stream goes on, so an unfinished
// character, or an end that could begin a secret, waits for the next slice (`end` moves back).
std::string SliceText(StreamSlice& slice, bool open, const std::vector<std::string>& secrets) {
  std::string_view bytes = slice.bytes;
  if (open) {
    std::string_view window = bytes.substr(slice.context);
    size_t held = PartialUtf8AtEnd(window);
    held += SecretStartAtEnd(window.substr(0, window.size() - held), secrets);
    bytes.remove_suffix(held);
    slice.end -= held;
  }
  return RedactWindow(bytes, slice.context, secrets, slice.cut);
}

}  // namespace

void ApplyCommandOutput(const std::string& out, const std::string& err, bool truncated, bool open,
                        const std::vector<std::string>& secrets, store::CommandRecord& record,
                        size_t keep, uint64_t (*ends)[2]) {
  size_t longest = LongestSecret(secrets);
  auto window = [&](const std::string& buffer, int stream) {
    if (buffer.size() > keep) record.truncated = true;
    StreamSlice slice = SliceFrom(buffer, buffer.size(), truncated,
                                  buffer.size() - std::min(buffer.size(), keep), longest);
    std::string text = SliceText(slice, open, secrets);
    if (ends) (*ends)[stream] = slice.end;
    return text;
  };
  record.truncated = truncated;
  record.stdout_text = window(out, 0);
  record.stderr_text = window(err, 1);
}

CommandRunner::Tap::Tap(std::shared_ptr<Running> command) : c_(std::move(command)) {}

bool CommandRunner::Tap::Next(std::string& out, std::string& err,
                              std::chrono::milliseconds timeout) {
  std::unique_lock lock(c_->mu);
  auto fresh = [&] { return c_->out_total > out_seen_ || c_->err_total > err_seen_; };
  c_->cv.wait_for(lock, timeout, [&] { return fresh() || c_->finished; });
  bool open = !c_->finished;
  out_seen_ = c_->out_total;
  err_seen_ = c_->err_total;
  size_t longest = LongestSecret(c_->secrets);
  StreamSlice o = SliceFrom(c_->out, c_->out_total, c_->truncated, out_pos_, longest);
  StreamSlice e = SliceFrom(c_->err, c_->err_total, c_->truncated, err_pos_, longest);
  lock.unlock();
  out = SliceText(o, open, c_->secrets);
  err = SliceText(e, open, c_->secrets);
  out_pos_ = o.end;
  err_pos_ = e.end;
  return open || !out.empty() || !err.empty();
}

void CommandRunner::SaveOutput(Running& c) {
  store::CommandRecord r;
  uint64_t saved_out = 0, saved_err = 0;
  std::shared_ptr<runtime::AgentSession> agent;
  uint32_t channel = 0;
  {
    std::lock_guard lock(c.mu);
    if (c.finished) return;
    r = c.record;
    uint64_t ends[2] = {0, 0};
    ApplyCommandOutput(c.out, c.err, c.truncated, true, c.secrets, r, kSavedBytesPerStream, &ends);
    c.saved_out_total = c.out_total;
    c.saved_err_total = c.err_total;
    c.saved_at = std::chrono::steady_clock::now();
    // Where the saved text ends in the streams' counts: a held-back partial character or
    // secret is not acknowledged, so the agent sends it again to an adaptd that attaches.
    saved_out = c.out_total - c.out.size() + ends[0];
    saved_err = c.err_total - c.err.size() + ends[1];
    agent = c.via_agent ? c.agent : nullptr;
    channel = c.channel;
  }
  Status st = store_.PutCommand(r);
  if (st.ok()) {
    if (!agent) return;
    agent::Ack ack;
    {
      // Saves and the final record are written by the command's watcher alone, in order. A
      // save can end short of the last acknowledged place (after a re-attach, the restored
      // text may end in what reads as the start of a secret): nothing more is recorded then.
      std::lock_guard lock(c.mu);
      ack.stdout_bytes = saved_out - std::min(saved_out, c.acked_out);
      ack.stderr_bytes = saved_err - std::min(saved_err, c.acked_err);
      c.acked_out = std::max(c.acked_out, saved_out);
      c.acked_err = std::max(c.acked_err, saved_err);
    }
    IgnoreError(agent->Acknowledge(channel, ack), "acknowledging its output");
    return;
  }
  spdlog::warn("command {}: saving its output so far: {}", r.id, st.message());
  // Nothing is lost here (the output stays in memory): the next save, an interval later,
  // tries again.
  std::lock_guard lock(c.mu);
  c.saved_out_total = c.saved_err_total = UINT64_MAX;
}

std::optional<store::CommandRecord> CommandRunner::Snapshot(const std::string& id) {
  std::shared_ptr<Running> c;
  {
    std::lock_guard lock(mu_);
    auto it = running_.find(id);
    if (it == running_.end()) return std::nullopt;
    c = it->second;
  }
  std::lock_guard lock(c->mu);
  store::CommandRecord r = c->record;
  ApplyCommandOutput(c->out, c->err, c->truncated, !c->finished, c->secrets, r);
  return r;
}

}  // namespace adapt::core
