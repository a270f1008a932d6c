# The shared TMPDIR of the tests (tests/CMakeLists.txt): MODE=setup makes it fresh and empty,
# MODE=check fails when a test left anything in it, naming what.
#   cmake -DDIR=<build>/test-tmp -DMODE=setup|check -P tmpdir_check.cmake
if(MODE STREQUAL "setup")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  return()
endif()
file(GLOB left RELATIVE "${DIR}" "${DIR}/*")
if(left)
  list(JOIN left ", " names)
  message(FATAL_ERROR "tests left files in their TMPDIR ${DIR}: ${names} (a test must write only under its own "
                      "temporary folder and remove it)")
endif()
message(STATUS "TMPDIR ${DIR} is empty: no test left a file behind")
