# The versions of lmprof's files and wire protocol come from one file that both languages
# read, python/src/lmprof/formats.json (docs/ARCHITECTURE.md, "One run record"): this
# writes them into lmprof/engine/formats.h in the build tree, and the Python package reads
# the same file. A change to it reconfigures the build. LMPROF_ROOT, where set, is the
# repository's root (the fuzz targets' project lives below it).
if(NOT LMPROF_ROOT)
  set(LMPROF_ROOT "${PROJECT_SOURCE_DIR}")
endif()
set(_formats_file "${LMPROF_ROOT}/python/src/lmprof/formats.json")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${_formats_file}")
file(READ "${_formats_file}" _formats)
foreach(_key result_schema journal_schema protocol)
  string(JSON _value ERROR_VARIABLE _error GET "${_formats}" "${_key}")
  if(_error)
    message(FATAL_ERROR "${_formats_file}: ${_key}: ${_error}")
  endif()
  string(TOUPPER "LMPROF_FORMAT_${_key}" _name)
  set(${_name} "${_value}")
endforeach()
if(NOT LMPROF_FORMAT_PROTOCOL MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "${_formats_file}: protocol: expected a positive whole number, "
    "got '${LMPROF_FORMAT_PROTOCOL}'")
endif()
configure_file("${LMPROF_ROOT}/cmake/formats.h.in"
  "${PROJECT_BINARY_DIR}/generated/public/lmprof/engine/formats.h" @ONLY)
