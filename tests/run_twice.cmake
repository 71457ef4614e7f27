# Runs a command twice and fails unless both runs succeed and print the same lines matching
# MATCH (determinism of the simulated times; other lines, such as CUnit's elapsed real time,
# may differ). Usage: cmake "-DCMD=prog|arg|..." -DMATCH=regex -P run_twice.cmake
string(REPLACE "|" ";" CMD "${CMD}")
foreach(i 1 2)
  execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${i} failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "${MATCH}[^\n]*" lines${i} "${out}")
endforeach()
if(NOT lines1)
  message(FATAL_ERROR "no line matches '${MATCH}'")
endif()
if(NOT lines1 STREQUAL lines2)
  message(FATAL_ERROR "the two runs differ:\n--- first\n${lines1}\n--- second\n${lines2}")
endif()
list(LENGTH lines1 n)
message(STATUS "${n} identical lines")
