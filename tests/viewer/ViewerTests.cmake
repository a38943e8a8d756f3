# The viewer build's own tests (LMPROF_ENGINE=OFF; included by tests/CMakeLists.txt after the
# torch-free core's): its programs end to end, and the window's logic that needs no engine.
# LMPROF_FULL_CLI names a full build's lmprof-cli to serve the connect part (CI's).
set(LMPROF_FULL_CLI "" CACHE FILEPATH "A full build's lmprof-cli, to serve the viewer's tests")

lmprof_test(cli_fields_test SOURCES app/cli_fields_test.cpp LIBS lmprof_cli_core)
target_include_directories(cli_fields_test PRIVATE "${PROJECT_SOURCE_DIR}/app"
                                                   "${CMAKE_CURRENT_SOURCE_DIR}/engine")
if(LMPROF_BUILD_GUI)
  lmprof_test(sweep_ui_test
    SOURCES ui/int_list_test.cpp ui/summary_model_test.cpp ui/autosave_test.cpp
    LIBS lmprof_ui)
  target_include_directories(sweep_ui_test PRIVATE "${PROJECT_SOURCE_DIR}/ui/src")

  foreach(part version refusal files watch connect window)
    add_test(NAME viewer_${part}
      COMMAND "${LMPROF_PYTHON}" "${CMAKE_CURRENT_SOURCE_DIR}/viewer/viewer_check.py"
              --cli "$<TARGET_FILE:lmprof-cli>" --gui "$<TARGET_FILE:lmprof>"
              --full-cli "${LMPROF_FULL_CLI}" --python "${LMPROF_PYTHON}"
              --workdir "${CMAKE_CURRENT_BINARY_DIR}/viewer/${part}" --part ${part})
    set_tests_properties(viewer_${part} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()
