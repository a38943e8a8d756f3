# LMPROF_DEPS=pypi: the libraries a build takes from Debian's -dev packages, taken instead from
# pinned files of the Python package index, so that a build needs no root (docs/INSTALL.md).
# Each file is fetched once into the build tree by fetch_sdist.py (pip's index, sha256
# checked) and only the members named are unpacked; nothing is committed. Defines the
# targets the system's packages would: nlohmann_json::nlohmann_json, simdjson::simdjson,
# CLI11::CLI11, GTest::gtest(_main), and LMPROF_ASIO_INCLUDE_DIR, LMPROF_GLOO_INCLUDE_DIR, stb
# (with the charts) and glfw (with the window) for the parent.

set(_deps "${CMAKE_BINARY_DIR}/_deps/pypi")

# fetch(NAME PROJECT FILE SHA256 MEMBER...): unpacks into ${_deps}/NAME, or stops the configure.
function(lmprof_fetch name project file sha256)
  execute_process(
    COMMAND "${_fetch_python}" "${CMAKE_CURRENT_SOURCE_DIR}/fetch_sdist.py" ${project} ${file}
            ${sha256} "${_deps}/${name}" ${ARGN}
    RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "LMPROF_DEPS=pypi: could not fetch ${file} (${project}) for ${name}")
  endif()
endfunction()

# nlohmann-json 3.12.0: its own wheel (a package of headers).
lmprof_fetch(nlohmann nlohmann-json nlohmann_json-3.12.0-py3-none-any.whl
  5f6132720fb25d0d70bf0742f8397b49a540dcc193e7312a914f6aa49f054810 include/nlohmann/)
add_library(lmprof_nlohmann_json INTERFACE)
target_include_directories(lmprof_nlohmann_json SYSTEM INTERFACE "${_deps}/nlohmann/include")
add_library(nlohmann_json::nlohmann_json ALIAS lmprof_nlohmann_json)

# simdjson 3.12.3: the amalgamation pysimdjson 7.0.2 builds from (Apache-2.0, its LICENSE).
lmprof_fetch(simdjson pysimdjson pysimdjson-7.0.2.tar.gz
  44cf276e48912a3b9c7ca362c14da8420a7ac15a9f1a16ec95becff86db3904a simdjson/simdjson. LICENSE)
add_library(lmprof_simdjson STATIC "${_deps}/simdjson/simdjson/simdjson.cpp")
target_include_directories(lmprof_simdjson SYSTEM PUBLIC "${_deps}/simdjson/simdjson")
set_target_properties(lmprof_simdjson PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_options(lmprof_simdjson PRIVATE -g0)
add_library(simdjson::simdjson ALIAS lmprof_simdjson)

# CLI11 2.5.0: the single header HiGHS 1.16.0's sdist carries, read as <CLI/CLI.hpp>.
lmprof_fetch(cli11 highspy highspy-1.16.0.tar.gz
  83519368321b1ac0ed508b8562b335928b6fd249e2ab42ff0218491e1486d985 extern/cli11/CLI11.hpp)
configure_file("${_deps}/cli11/extern/cli11/CLI11.hpp" "${_deps}/cli11/include/CLI/CLI.hpp"
               COPYONLY)
add_library(lmprof_cli11 INTERFACE)
target_include_directories(lmprof_cli11 SYSTEM INTERFACE "${_deps}/cli11/include")
add_library(CLI11::CLI11 ALIAS lmprof_cli11)

# Standalone Asio 1.34.2 (headers only): the copy the Couchbase 4.6.3 sdist carries.
set(_asio deps/couchbase-cxx-cache/asio/c246/asio/asio/include)
lmprof_fetch(asio couchbase couchbase-4.6.3.tar.gz
  c027821d1d6a89ffd80f21d81903cd3f6ba164c0217c022ca3323748369f8789 ${_asio}/)
set(LMPROF_ASIO_INCLUDE_DIR "${_deps}/asio/${_asio}" CACHE PATH "asio.hpp's folder" FORCE)

if(LMPROF_BUILD_TESTS)
  # GoogleTest 1.15.0: the tree OpenCC 1.4.2's sdist carries, built here.
  lmprof_fetch(googletest opencc opencc-1.4.2.tar.gz
    47977905f131d7d9cfcec29fba5d841154907e1da73103105a4a68744e0f4f1a deps/googletest-1.15.0/)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory("${_deps}/googletest/deps/googletest-1.15.0" "${CMAKE_BINARY_DIR}/_deps/gtest"
                   EXCLUDE_FROM_ALL SYSTEM)
  # Its own CMake names them GTest::gtest and GTest::gtest_main, as find_package(GTest) does.
endif()

if(LMPROF_ENGINE)
  # Gloo's headers, which LibTorch's ProcessGroupGloo.hpp includes and the torch wheel does
  # not ship (the Gloo that runs is LibTorch's own): the tree Horovod 0.28.1's sdist carries.
  lmprof_fetch(gloo horovod horovod-0.28.1.tar.gz
    92a43f5a94c43907a56805bad15f19700c62ffc83b7ca483f9e104e229f67ef0 third_party/gloo/gloo/)
  set(LMPROF_GLOO_INCLUDE_DIR "${_deps}/gloo/third_party/gloo" CACHE PATH "gloo/'s folder" FORCE)
endif()
