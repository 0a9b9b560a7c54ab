// The SSE stream of one command's output (see command_stream.cc for the events).
#pragma once

#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/auth.h"
#include "core/command_service.h"

namespace adapt::api {

std::shared_ptr<ResponseStream> MakeCommandOutputStream(core::CommandService& commands,
                                                        const core::Principal& who,
                                                        const std::string& sandbox_id,
                                                        const std::string& id);

}  // namespace adapt::api
