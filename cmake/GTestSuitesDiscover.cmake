# Run by ctxkit_add_test_suites (GTestSuites.cmake) after a test program is built:
#   cmake -D EXE=… -D LABEL=… -D WORKDIR=… -D XML_DIR=… -D OUT=… -P GTestSuitesDiscover.cmake
# Lists the program's suites (--gtest_list_tests) and writes OUT, the CTest script that adds a
# test per suite.
execute_process(COMMAND ${EXE} --gtest_list_tests
  WORKING_DIRECTORY ${WORKDIR} TIMEOUT 60
  RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT})
  message(FATAL_ERROR "listing the tests of ${EXE} failed (${rc}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "# Written by cmake/GTestSuitesDiscover.cmake from ${EXE} --gtest_list_tests.\n")
set(count 0)
foreach(line IN LISTS lines)
  # A suite's line starts in column 0 and ends its name with a dot (a typed suite's line goes on
  # with "  # TypeParam = …"); its cases follow, indented.
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    string(REPLACE "/" "_" file_name "${LABEL}-${suite}")
    string(APPEND script
      "add_test([==[${LABEL}:${suite}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*]==] "
      "--gtest_brief=1 [==[--gtest_output=xml:${XML_DIR}/${file_name}.xml]==])\n"
      "set_tests_properties([==[${LABEL}:${suite}]==] PROPERTIES LABELS ${LABEL} "
      "WORKING_DIRECTORY [==[${WORKDIR}]==])\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests listed no suite")
endif()
file(WRITE ${OUT}.tmp "${script}")
file(RENAME ${OUT}.tmp ${OUT})
