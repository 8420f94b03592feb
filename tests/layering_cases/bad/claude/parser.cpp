#include "claude/parser.hpp"
#include <util/process.hpp>
