# Run by ctest after its summary (CTEST_CUSTOM_POST_TEST, see tests/CMakeLists.txt): for every
# test this run skipped, the reason it printed on its "SKIPPED: ..." line, so that ctest's
# output says why a suite did not run, not only that it did not. ctest's log does not record
# the skip itself, so a test that prints a line starting "SKIPPED: " counts as skipped: only a
# test that then exits with its SKIP_RETURN_CODE may print one.
#   cmake -DLOG_DIR=<build>/Testing/Temporary -P skip_reasons.cmake
# While the post-test command runs, ctest is still writing this run's log as LastTest.log.tmp
# (LastTest.log is the previous run's); dashboard runs name it after their start time.
file(GLOB logs "${LOG_DIR}/LastTest*.log.tmp")
if(NOT logs)
  return()
endif()
list(SORT logs)
list(POP_BACK logs log)
file(STRINGS "${log}" lines)
set(test "")
set(reason "")
set(out "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9]+/[0-9]+ Test: (.+)$")
    set(test "${CMAKE_MATCH_1}")
    set(reason "")
  elseif(line MATCHES "^SKIPPED: (.*)$" AND reason STREQUAL "")
    set(reason "${CMAKE_MATCH_1}")
    string(APPEND out "  ${test}: ${reason}\n")
  endif()
endforeach()
if(out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "Skipped, and why:\n${out}")
endif()
