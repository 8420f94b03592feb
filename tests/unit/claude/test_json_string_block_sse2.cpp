// The string-block kernel for the base instruction set, the kernel of a portable build.
#define CTXKIT_BLOCK_SUITE JsonStringBlockSse2
#include "unit/claude/json_string_block_tests.hpp"
