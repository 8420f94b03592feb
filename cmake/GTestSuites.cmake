# One CTest test per GoogleTest suite (CONTRIBUTING.md, "Tests"): a test program is started once per
# suite instead of once per test case (2,000 starts of 30-40 ms each are most of a default run's
# time on two cores). Each suite writes GoogleTest's XML report, from which tests/test_report.py
# counts the cases and tells which were skipped (CTest would count a suite with one skip as
# skipped, or one as passed). CTXKIT_TEST_PER_CASE=ON gives a test per case again
# (gtest_discover_tests), for `ctest -R Suite.Case`.
option(CTXKIT_TEST_PER_CASE "One CTest test per test case instead of one per suite" OFF)
set(_ctxkit_gtest_suites_script ${CMAKE_CURRENT_LIST_DIR}/GTestSuitesDiscover.cmake)

# ctxkit_add_test_suites(target LABEL): the suites of `target`, listed after each build of it,
# as CTest tests named <LABEL>:<suite>, labelled LABEL, each writing
# <binary dir>/gtest-results/<LABEL>-<suite>.xml.
function(ctxkit_add_test_suites target label)
  if(CTXKIT_TEST_PER_CASE)
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${label})
    return()
  endif()
  set(tests_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -D EXE=$<TARGET_FILE:${target}>
      -D LABEL=${label}
      -D WORKDIR=${CMAKE_CURRENT_BINARY_DIR}
      -D XML_DIR=${CMAKE_CURRENT_BINARY_DIR}/gtest-results
      -D OUT=${tests_file}
      -P ${_ctxkit_gtest_suites_script}
    BYPRODUCTS ${tests_file}
    VERBATIM)
  file(WRITE ${include_file}
    "if(EXISTS \"${tests_file}\")\n"
    "  include(\"${tests_file}\")\n"
    "else()\n"
    "  add_test(${label}:NOT_BUILT ${CMAKE_COMMAND} -E echo \"${target} is not built\")\n"
    "  set_tests_properties(${label}:NOT_BUILT PROPERTIES WILL_FAIL ON LABELS ${label})\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
