# Warnings apply to our own targets only, through this interface target.
add_library(ctxkit_warnings INTERFACE)
target_compile_options(ctxkit_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(CTXKIT_WERROR)
  target_compile_options(ctxkit_warnings INTERFACE -Werror)
endif()

add_library(ctxkit_sanitizers INTERFACE)
set(_san "")
if(CTXKIT_SANITIZE_ADDRESS)
  list(APPEND _san address)
endif()
if(CTXKIT_SANITIZE_UNDEFINED)
  list(APPEND _san undefined)
endif()
if(CTXKIT_SANITIZE_THREAD)
  list(APPEND _san thread)
endif()
if(_san)
  list(JOIN _san "," _san_list)
  # A sanitizer report fails the test that triggered it instead of scrolling past.
  target_compile_options(ctxkit_sanitizers INTERFACE -fsanitize=${_san_list} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(ctxkit_sanitizers INTERFACE -fsanitize=${_san_list} -fno-sanitize-recover=all)
  # GCC warns of "maybe uninitialized" values that are not, far more often with a sanitizer's
  # instrumentation (its manual advises against -Werror with sanitizers; GCC 12 flags libstdc++'s
  # own <regex> and <functional>), and of null dereferences on paths the instrumentation adds
  # (under TSan, one in nlohmann's json.hpp): the warnings stay, they do not fail the sanitizer
  # build. The plain build (tests/run.sh) keeps both as errors.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(ctxkit_warnings INTERFACE -Wno-error=maybe-uninitialized
                                                     -Wno-error=null-dereference)
  endif()
endif()
if(CTXKIT_COVERAGE)
  target_compile_options(ctxkit_sanitizers INTERFACE --coverage)
  target_link_options(ctxkit_sanitizers INTERFACE --coverage)
endif()

# libFuzzer targets (tests/fuzz/): the whole library is instrumented for coverage and built with
# ASan+UBSan; only clang has libFuzzer. libstdc++ 12 enables <expected> only for a compiler that
# announces C++20 concepts in full, which clang 16 implements without announcing them.
if(CTXKIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16)
    message(FATAL_ERROR "CTXKIT_FUZZ needs clang 16 or later (CC=clang-16 CXX=clang++-16)")
  endif()
  target_compile_options(ctxkit_sanitizers INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(ctxkit_sanitizers INTERFACE -fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 19)
    add_compile_options(-D__cpp_concepts=202002L -Wno-macro-redefined)
  endif()
endif()
