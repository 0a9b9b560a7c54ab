// Escaping text for HTML and XML (the consent page, the storage gateway's S3 answers).
#pragma once

#include <string>
#include <string_view>

namespace adapt {

// Escapes & < > " ' for HTML and XML text and attribute values alike (' as &#39;, which
// both accept).
std::string EscapeMarkup(std::string_view text);

}  // namespace adapt
