// How the SQLite store encodes a sandbox network's `data` column: JSON text with the keys rows
// have always had (address, hostAddress, address6, hostAddress6, egress, dns, allow,
// hostnames, dnsUpstream, dnsAllNames), so databases written before the typed record read
// back the same. Internal to store/.
#pragma once

#include <string>

#include "store/records.h"

namespace adapt::store {

// The record's addresses and policy (not its sandbox id, slot or time: those are columns).
std::string EncodeNetworkData(const NetworkRecord& network);
// Fills `network`'s addresses and policy from `text`; a missing key keeps its default, and
// text that is not a JSON object leaves them all at their defaults.
void DecodeNetworkData(const std::string& text, NetworkRecord& network);

}  // namespace adapt::store
