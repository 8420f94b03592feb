#pragma once
// Allowed: system and third-party headers, and the folders workflow/ may include.
#include <sys/stat.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>
#include "context/meter.hpp"
#include <store/thing.hpp>
#include "workflow/other.hpp"
