// Where the CLI finds adaptd and which key it presents.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::cli {

struct ClientConfig {
  // adaptd's base URL, without a trailing slash.
  std::string url = "http://127.0.0.1:8080";
  // Bearer key; empty means none is sent (adaptd then answers 401).
  std::string api_key;
};

// Values given on the command line; empty means not given.
struct ConfigFlags {
  std::string url;      // --url
  std::string api_key;  // --api-key
};

// Fills each field from the first source that sets it (empty values count as unset):
//   1. flags (--url, --api-key)
//   2. the environment: ADAPT_URL, ADAPT_API_KEY
//   3. the config file (ConfigFilePath()), {"url": "...", "apiKey": "..."}, if it exists
//   4. defaults: http://127.0.0.1:8080, and the admin key adaptd writes to
//      ${ADAPT_STATE_DIR:-/var/lib/adapt}/admin.key when this user can read it.
// Fails only when the config file exists but cannot be read or is not that JSON object.
// Reads the process environment, so it must not race with setenv().
Result<ClientConfig> ResolveClientConfig(const ConfigFlags& flags);

// ${XDG_CONFIG_HOME:-$HOME/.config}/adapt/config.json; "" when neither variable is set.
std::string ConfigFilePath();

}  // namespace adapt::cli
