// How a sandbox looks on the wire (API.md): the stored record, with the live startup
// output of a running sandbox when there is one. Environment values never appear; they
// are redacted from output.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/output_ring.h"
#include "store/records.h"

namespace adapt::core {

// Secrets to redact from a sandbox's output: its env values of 3 bytes or more (shorter
// ones would blank out ordinary output).
std::vector<std::string> RedactionValues(const store::SandboxRecord& r);

// Fills result.stdout/stderr/truncated from `output`, redacted and made valid UTF-8.
void ApplyOutput(const store::SandboxRecord& r, const runtime::OutputRing& output,
                 nlohmann::json& result);

// `live`: the running sandbox's current output, if any.
nlohmann::json SandboxToJson(const store::SandboxRecord& r,
                             const runtime::OutputRing* live = nullptr);

}  // namespace adapt::core
