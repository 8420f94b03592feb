# Every dependency comes from a Debian -dev package.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
# fmt's headers in their normal mode: its compiled part is built once in the library
# (lib/util/fmt_compiled.cpp), neither from the shared libfmt nor header-only in every file.
add_library(ctxkit_fmt INTERFACE)
get_target_property(_fmt_inc fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(ctxkit_fmt SYSTEM INTERFACE ${_fmt_inc})
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)
find_package(yaml-cpp REQUIRED)

# SIMD flags for the simdjson On-Demand scanner, if this machine runs them.
include(CheckCXXSourceRuns)
set(CTXKIT_AVX2_FLAGS -mavx2 -mbmi -mbmi2 -mpclmul -mlzcnt -mpopcnt)
list(JOIN CTXKIT_AVX2_FLAGS " " CMAKE_REQUIRED_FLAGS)
check_cxx_source_runs("
  #include <immintrin.h>
  int main() {
    if (!__builtin_cpu_supports(\"avx2\") || !__builtin_cpu_supports(\"bmi\") || !__builtin_cpu_supports(\"bmi2\") || !__builtin_cpu_supports(\"pclmul\")) return 1;
    __m256i a = _mm256_set1_epi8(1);
    return _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, a)) == -1 ? 0 : 1;
  }" CTXKIT_HAVE_AVX2)
unset(CMAKE_REQUIRED_FLAGS)
if(CTXKIT_HAVE_AVX2 AND NOT CTXKIT_PORTABLE)
  set(CTXKIT_SIMD_FLAGS ${CTXKIT_AVX2_FLAGS})
endif()

# The hook payload scan's string blocks (lib/claude/json_string_block.hpp) also use AVX-512's mask
# registers on 32-byte vectors when the build machine runs them. CTXKIT_STRING_BLOCK_KERNEL names
# the kernel those flags build (the names of json_string_block.hpp), for its tests.
set(_avx512_flags -mavx512f -mavx512bw -mavx512vl)
list(JOIN _avx512_flags " " CMAKE_REQUIRED_FLAGS)
check_cxx_source_runs("
  #include <immintrin.h>
  int main() {
    if (!__builtin_cpu_supports(\"avx512bw\") || !__builtin_cpu_supports(\"avx512vl\")) return 1;
    __m256i a = _mm256_set1_epi8(1);
    __mmask32 k = _mm256_cmpeq_epi8_mask(a, a);
    return _cvtmask64_u64(_mm512_kunpackd(k, k)) == ~0ull ? 0 : 1;
  }" CTXKIT_HAVE_AVX512BW)
unset(CMAKE_REQUIRED_FLAGS)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(CTXKIT_BASE_KERNEL sse2)
else()
  set(CTXKIT_BASE_KERNEL bytewise)
endif()
set(CTXKIT_STRING_BLOCK_FLAGS ${CTXKIT_SIMD_FLAGS})
if(CTXKIT_SIMD_FLAGS AND CTXKIT_HAVE_AVX512BW)
  list(APPEND CTXKIT_STRING_BLOCK_FLAGS ${_avx512_flags})
  set(CTXKIT_STRING_BLOCK_KERNEL avx512)
elseif(CTXKIT_SIMD_FLAGS)
  set(CTXKIT_STRING_BLOCK_KERNEL avx2)
else()
  set(CTXKIT_STRING_BLOCK_KERNEL ${CTXKIT_BASE_KERNEL})
endif()

# The hooks run on every tool call, so process start-up matters: link SQLite statically when the
# distribution ships the archive, build fmt into the library (above) and use toml++ header-only (no
# shared C++ libraries to load and relocate at start).
find_library(CTXKIT_SQLITE3_STATIC NAMES libsqlite3.a)
add_library(ctxkit_sqlite INTERFACE)
if(CTXKIT_SQLITE3_STATIC AND NOT CTXKIT_SANITIZE_THREAD)
  target_link_libraries(ctxkit_sqlite INTERFACE ${CTXKIT_SQLITE3_STATIC} ${CMAKE_DL_LIBS} m Threads::Threads)
  target_include_directories(ctxkit_sqlite INTERFACE ${SQLite3_INCLUDE_DIRS})
else()
  target_link_libraries(ctxkit_sqlite INTERFACE SQLite::SQLite3)  # what FindSQLite3 defines
endif()

# yaml-cpp (workflow templates): the static archive when the distribution ships it, so that the
# programs that read templates do not load one more shared C++ library.
find_library(CTXKIT_YAML_CPP_STATIC NAMES libyaml-cpp.a)
add_library(ctxkit_yaml INTERFACE)
if(CTXKIT_YAML_CPP_STATIC)
  get_target_property(_yaml_inc yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
  target_link_libraries(ctxkit_yaml INTERFACE ${CTXKIT_YAML_CPP_STATIC})
  if(_yaml_inc)
    target_include_directories(ctxkit_yaml SYSTEM INTERFACE ${_yaml_inc})
  endif()
else()
  target_link_libraries(ctxkit_yaml INTERFACE yaml-cpp)
endif()
