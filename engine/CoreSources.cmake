# The sources of lmprof_core, the torch-free half of the engine, as absolute paths: the
# engine's CMakeLists.txt and the fuzzing project (tests/fuzz) build the same list.
set(LMPROF_CORE_SOURCES)
foreach(_src
    config.cpp config_fields.cpp ddp.cpp ddp_launch.cpp precision.cpp records.cpp run_verdict.cpp stats.cpp compare.cpp sweep.cpp
    sweep_driver.cpp
    session_interface.cpp file_io.cpp format.cpp
    lab/precision_lab.cpp
    memory/memory_model.cpp
    verdicts/verdicts.cpp verdicts/step_time_verdicts.cpp verdicts/straggler.cpp
    profile/op_analysis.cpp profile/op_profile.cpp
    results/result_json.cpp results/memory_json.cpp results/result_file.cpp
    results/op_profile_json.cpp results/ddp_json.cpp results/verdict_json.cpp results/watch_journal.cpp
    results/simd_node.cpp results/result_reading.cpp results/json_lines.cpp
    report/columns.cpp report/scalar_columns.cpp report/report_cells.cpp report/table_writer.cpp
    report/markdown_writer.cpp report/csv_writer.cpp report/compare_writer.cpp
    report/op_writer.cpp report/lab_writer.cpp results/lab_json.cpp
    report/ddp_writer.cpp report/verdict_writer.cpp
    study/study_plan.cpp study/study_report.cpp study/study_report_scale.cpp study/study_files.cpp
    study/study_driver.cpp
    remote/remote_protocol.cpp
    local_engine.cpp platform/nvml.cpp platform/process_info.cpp)
  list(APPEND LMPROF_CORE_SOURCES "${CMAKE_CURRENT_LIST_DIR}/src/${_src}")
endforeach()
