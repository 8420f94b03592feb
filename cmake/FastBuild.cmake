# Build time on a small machine (CONTRIBUTING.md, "Building"). GCC spends most of a cold build parsing the
# same header-only libraries (nlohmann/json, fmt, gtest) in every file and instantiating the same
# templates again in each. Two remedies, each with an option to turn it off:
#  - a precompiled header of the heavy headers (CTXKIT_PCH), shared by the two test programs
#    through REUSE_FROM;
#  - unity builds (CTXKIT_UNITY): the test files and the library's files, compiled in groups of up
#    to CTXKIT_UNITY_BATCH. The library's files that no statically linked program (a hook) links
#    are grouped apart from the hooks' own; the hooks link with --gc-sections and the library is
#    compiled with a section per function, so a hook keeps only what it reaches of a group, and
#    the hot-text script (bench/hot-text.ld) names functions, not objects (lib/CMakeLists.txt).
option(CTXKIT_PCH "Precompile the heavy third-party headers" ON)
option(CTXKIT_UNITY "Compile the tests and the library in unity groups" ON)
set(CTXKIT_UNITY_BATCH 16 CACHE STRING "Files per unity group")

# The headers of the precompiled header: the standard library parts and third-party libraries that
# most files include.
set(CTXKIT_PCH_HEADERS
  <algorithm> <chrono> <cstdint> <filesystem> <functional> <map> <optional> <string>
  <string_view> <vector> <fmt/core.h> <nlohmann/json.hpp>)

# ctxkit_pch(target [REUSE_FROM other] [HEADERS h...]): a precompiled header of CTXKIT_PCH_HEADERS
# plus HEADERS, or the one of `other` (same compile options).
function(ctxkit_pch target)
  cmake_parse_arguments(ARG "" "REUSE_FROM" "HEADERS" ${ARGN})
  if(NOT DEFINED CTXKIT_PCH)
    # Undefined reads as OFF: a lost option() once turned the header off for every new build.
    message(FATAL_ERROR "ctxkit_pch: CTXKIT_PCH is not defined (option() in cmake/FastBuild.cmake)")
  endif()
  if(NOT CTXKIT_PCH)
    return()
  endif()
  if(ARG_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${ARG_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${CTXKIT_PCH_HEADERS} ${ARG_HEADERS})
  endif()
endfunction()

# The names a file defines at namespace scope, as far as lines that start in column 0 tell:
# functions, types, constants, aliases (with what they name), using-declarations and macros. Two files that share one
# are not put in one unity group (their anonymous namespaces would clash).
function(_ctxkit_file_names file out)
  file(STRINGS ${file} lines REGEX "^[A-Za-z_#]")
  set(names)
  foreach(line IN LISTS lines)
    if(line MATCHES "^(TEST|TEST_F|TEST_P|INSTANTIATE_TEST_SUITE_P|TYPED_TEST|namespace|return|#include|#pragma|#if|#endif|#else)[ (]")
      continue()
    elseif(line MATCHES "^#define[ ]+([A-Za-z_][A-Za-z0-9_]*)")
      list(APPEND names "macro:${CMAKE_MATCH_1}")
    elseif(line MATCHES "^using[ ]+[A-Za-z0-9_:]*::([A-Za-z_][A-Za-z0-9_]*)[ ]*;")
      # A using-declaration (`using test::Recorded;`) brings the name in as one of its own.
      list(APPEND names "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^using[ ]+([A-Za-z_][A-Za-z0-9_]*)[ ]*=[ ]*([^;]*);")
      string(REPLACE " " "" _target "${CMAKE_MATCH_2}")
      list(APPEND names "alias:${CMAKE_MATCH_1}=${_target}")
    elseif(line MATCHES "^(struct|class|enum|enum class|union)[ ]+([A-Za-z_][A-Za-z0-9_]*)")
      list(APPEND names "${CMAKE_MATCH_2}")
    elseif(line MATCHES "^[^=;(]*[ *&]([A-Za-z_][A-Za-z0-9_]*)[ ]*(\\(|=|\\[|{)")
      list(APPEND names "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# ctxkit_unity_groups(target [PREFIX p] file...): the files in unity groups of up to
# CTXKIT_UNITY_BATCH, each in the first group that holds none of its names (an alias of one name
# to two different types counts as a clash); the groups are named <target>_<p><n> (their objects
# unity_<target>_<p><n>_cxx.cxx.o). The target's other files are compiled one by one.
function(ctxkit_unity_groups target)
  cmake_parse_arguments(ARG "" "PREFIX" "" ${ARGN})
  if(NOT CTXKIT_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(groups 0)
  foreach(file IN LISTS ARG_UNPARSED_ARGUMENTS)
    _ctxkit_file_names(${file} names)
    set(alias_names)
    foreach(n IN LISTS names)
      if(n MATCHES "^alias:([^=]*)=")
        list(APPEND alias_names "alias:${CMAKE_MATCH_1}")
      endif()
    endforeach()
    set(chosen -1)
    foreach(g RANGE ${groups})
      if(NOT DEFINED _size_${g})
        set(_size_${g} 0)
        set(_names_${g})
      endif()
      if(_size_${g} GREATER_EQUAL CTXKIT_UNITY_BATCH)
        continue()
      endif()
      set(clash OFF)
      foreach(n IN LISTS names)
        if(n MATCHES "^alias:([^=]*)=")
          # The same alias to the same type is allowed twice; to another type it clashes.
          set(_an "alias:${CMAKE_MATCH_1}")
          if("${_an}" IN_LIST _anames_${g} AND NOT "${n}" IN_LIST _names_${g})
            set(clash ON)
          endif()
        elseif("${n}" IN_LIST _names_${g})
          set(clash ON)
        endif()
      endforeach()
      if(NOT clash)
        set(chosen ${g})
        break()
      endif()
    endforeach()
    if(chosen EQUAL -1)
      math(EXPR groups "${groups} + 1")
      set(chosen ${groups})
      set(_size_${chosen} 0)
      set(_names_${chosen})
      set(_anames_${chosen})
    endif()
    math(EXPR _size_${chosen} "${_size_${chosen}} + 1")
    list(APPEND _names_${chosen} ${names})
    list(APPEND _anames_${chosen} ${alias_names})
    set_source_files_properties(${file} PROPERTIES UNITY_GROUP "${target}_${ARG_PREFIX}${chosen}")
  endforeach()
endfunction()
