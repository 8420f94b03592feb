// The string-block kernel for AVX2 without AVX-512, the kernel of a machine that lacks it.
#define CTXKIT_BLOCK_SUITE JsonStringBlockAvx2
#include "unit/claude/json_string_block_tests.hpp"
