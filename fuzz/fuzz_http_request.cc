// The HTTP request path up to a handler: Beast's parser with the server's limits, then
// ToHttpRequest (target split and percent-decoded, headers folded), then what handlers do
// first with it (ParseJsonBody, QueryInt). Any crash, sanitizer report or exception that
// escapes is a bug: the server must answer bad bytes with a 400.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/http_request_decoding.h"
#include "api/request_parsing.h"
#include "base/hex.h"
#include "base/percent.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (auto plus : {adapt::PlusSign::kSpace, adapt::PlusSign::kLiteral}) {
    auto strict = adapt::PercentDecode(in, plus);
    auto lenient = adapt::PercentDecodeLenient(in, plus);
    // Where an input decodes strictly, lenient decoding must agree.
    if (strict && *strict != lenient) __builtin_trap();
  }
  auto hex = adapt::HexDecode(in);
  if (hex && adapt::HexEncode(*hex).size() != in.size()) __builtin_trap();

  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);  // http_connection_internal.h's kMaxHeaderBytes
  parser.body_limit(1024 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  size_t used = parser.put(boost::asio::buffer(in.data(), in.size()), ec);
  if (!ec && parser.is_header_done() && !parser.is_done() && used < in.size())
    parser.put(boost::asio::buffer(in.data() + used, in.size() - used), ec);
  if (ec || !parser.is_header_done()) return 0;

  auto from_header = adapt::api::ToHttpRequest(parser.get().base(), "127.0.0.1");
  if (!parser.is_done()) return 0;
  auto request = adapt::api::ToHttpRequest(parser.release(), "127.0.0.1");
  if (!request) return 0;
  if (from_header && from_header->path != request->path) __builtin_trap();
  auto body = adapt::api::ParseJsonBody(*request);
  if (body.ok() && !body->is_object()) __builtin_trap();
  for (const char* name : {"limit", "waitSeconds", "offset"})
    (void)adapt::api::QueryInt(*request, name, 7);  // any answer is fine; a crash is not
  return 0;
}
