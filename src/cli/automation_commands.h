// adapt automation create|ls|get|enable|disable|rm|trigger (automation_commands.cc).
#pragma once

#include "cli/commands.h"

namespace adapt::cli {

void AddAutomationCommands(CLI::App& app, Invocation& invocation);

}  // namespace adapt::cli
