// Logging goes through spdlog; this header only fixes the include in one place.
#pragma once

#include <spdlog/spdlog.h>
