// The string-block kernel as the payload scan is built (lib/CMakeLists.txt).
#define CTXKIT_BLOCK_SUITE JsonStringBlock
#include "unit/claude/json_string_block_tests.hpp"
