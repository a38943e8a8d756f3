# Writes lmprof_version.h (version and git revision) into the build tree.
find_package(Git QUIET)
set(LMPROF_GIT_REVISION "unknown")
if(LMPROF_GIT_REVISION_OVERRIDE)
  # A copy without .git (the GPU check kit's machine) is told its revision.
  set(LMPROF_GIT_REVISION "${LMPROF_GIT_REVISION_OVERRIDE}")
elseif(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short HEAD
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE _rev OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0)
    set(LMPROF_GIT_REVISION "${_rev}")
  endif()
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/lmprof_version.h.in"
  "${PROJECT_BINARY_DIR}/generated/lmprof_version.h" @ONLY)
