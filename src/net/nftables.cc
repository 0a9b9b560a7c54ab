#include "net/nftables.h"

#include <nftables/libnftables.h>

#include <memory>
#include <mutex>

namespace adapt::net {
namespace {

// libnftables contexts are not thread-safe; one at a time is plenty for adapt.
std::mutex nft_mu;

struct Ctx {
  nft_ctx* ctx = nft_ctx_new(NFT_CTX_DEFAULT);
  Ctx() {
    if (ctx) {
      nft_ctx_buffer_output(ctx);
      nft_ctx_buffer_error(ctx);
    }
  }
  ~Ctx() {
    if (ctx) nft_ctx_free(ctx);
  }
};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Status RunNft(const std::string& commands) {
  std::lock_guard lock(nft_mu);
  Ctx c;
  if (!c.ctx) return Internal("cannot create an nftables context");
  if (nft_run_cmd_from_buffer(c.ctx, commands.c_str()) != 0) {
    std::string err = Trim(nft_ctx_get_error_buffer(c.ctx));
    return Internal("nftables refused the rules: " + (err.empty() ? commands : err));
  }
  return Status::Ok();
}

Status CheckNft(const std::string& commands) {
  std::lock_guard lock(nft_mu);
  Ctx c;
  if (!c.ctx) return Internal("cannot create an nftables context");
  nft_ctx_set_dry_run(c.ctx, true);
  if (nft_run_cmd_from_buffer(c.ctx, commands.c_str()) != 0)
    return Internal("nftables refused the rules: " + Trim(nft_ctx_get_error_buffer(c.ctx)));
  return Status::Ok();
}

Result<std::string> ListNft(const std::string& what) {
  std::lock_guard lock(nft_mu);
  Ctx c;
  if (!c.ctx) return Internal("cannot create an nftables context");
  std::string cmd = "list " + what;
  if (nft_run_cmd_from_buffer(c.ctx, cmd.c_str()) != 0)
    return NotFound("nftables has no " + what + ": " + Trim(nft_ctx_get_error_buffer(c.ctx)));
  return std::string(nft_ctx_get_output_buffer(c.ctx));
}

}  // namespace adapt::net
