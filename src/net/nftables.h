// A thin layer over libnftables: runs nft command text as one transaction.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::net {

// Runs `commands` (nft syntax, one command a line) atomically: all or nothing.
Status RunNft(const std::string& commands);
// Parses and validates `commands` against the kernel without applying them (dry run).
Status CheckNft(const std::string& commands);
// `nft list ruleset`-style listing of `what` (e.g. "table inet adapt"); NotFound if absent.
Result<std::string> ListNft(const std::string& what);

}  // namespace adapt::net
