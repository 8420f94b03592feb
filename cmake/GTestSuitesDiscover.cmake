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
    set(shards 1)
    foreach(entry IN LISTS SHARDS)
      if(entry MATCHES "^${suite}=([0-9]+)$")
        set(shards ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(shards GREATER 1)
      math(EXPR last "${shards} - 1")
      foreach(k RANGE ${last})
        set(name "${LABEL}:${suite}.shard${k}")
        string(APPEND script
          "add_test([==[${name}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*]==] "
          "--gtest_brief=1 [==[--gtest_output=xml:${XML_DIR}/${file_name}.shard${k}.xml]==])\n"
          "set_tests_properties([==[${name}]==] PROPERTIES LABELS ${LABEL} "
          "WORKING_DIRECTORY [==[${WORKDIR}]==] "
          "ENVIRONMENT [==[GTEST_TOTAL_SHARDS=${shards};GTEST_SHARD_INDEX=${k}]==])\n")
      endforeach()
    else()
      string(APPEND script
        "add_test([==[${LABEL}:${suite}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*]==] "
        "--gtest_brief=1 [==[--gtest_output=xml:${XML_DIR}/${file_name}.xml]==])\n"
        "set_tests_properties([==[${LABEL}:${suite}]==] PROPERTIES LABELS ${LABEL} "
        "WORKING_DIRECTORY [==[${WORKDIR}]==])\n")
    endif()
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests listed no suite")
endif()
file(WRITE ${OUT}.tmp "${script}")
file(RENAME ${OUT}.tmp ${OUT})
