# Helpers for tests/. Unit tests are GoogleTest programs run directly (label "unit"); MPI tests run the
# same kind of program under mpirun with several ranks (label "mpi"). Open MPI refuses to run as root
# unless told otherwise: the tests set that, so neither CI nor a user has to.
set(LLMTRAIN_MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
# Where the tests find ../shared (tokenizer files, test vectors); tests fall back to files in the repo.
set(LLMTRAIN_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH "The shared/ folder with reference data (optional)")

# llmtrain_unit_test(NAME SOURCES <files> LIBS <targets> [SHARED_CASES <gtest filter>])
# SHARED_CASES: the cases that need a file from LLMTRAIN_SHARED_DIR and GTEST_SKIP without it (Llama-3's
# tokenizer.json, which the repository may not carry). They run as their own ctest test, NAME_shared, which
# ctest reports as skipped (not passed) when they skip; NAME runs every other case.
function(llmtrain_unit_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;SHARED_CASES" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main llmtrain_warnings)
  target_compile_definitions(${name} PRIVATE
    LLMTRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LLMTRAIN_DEFAULT_SHARED_DIR="${LLMTRAIN_SHARED_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(ARG_SHARED_CASES)
    add_test(NAME ${name} COMMAND ${name} --gtest_filter=-${ARG_SHARED_CASES})
    add_test(NAME ${name}_shared COMMAND ${name} --gtest_filter=${ARG_SHARED_CASES})
    set_tests_properties(${name}_shared PROPERTIES LABELS unit TIMEOUT ${ARG_TIMEOUT}
                         SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" ENVIRONMENT "LLMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  else()
    add_test(NAME ${name} COMMAND ${name})
  endif()
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT ${ARG_TIMEOUT}
                       ENVIRONMENT "LLMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# llmtrain_mpi_test(NAME TARGET <exe> RANKS <n...> [ARGS ...]): one ctest per rank count.
function(llmtrain_mpi_test name)
  cmake_parse_arguments(ARG "" "TARGET;TIMEOUT" "RANKS;ARGS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  foreach(np ${ARG_RANKS})
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                     $<TARGET_FILE:${ARG_TARGET}> ${ARG_ARGS})
    set_tests_properties(${name}_np${np} PROPERTIES LABELS mpi TIMEOUT ${ARG_TIMEOUT}
                         ENVIRONMENT "${LLMTRAIN_MPI_ENV};LLMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  endforeach()
endfunction()

# llmtrain_command_test(NAME LABEL <unit|mpi> CMD <command...> [EXPECT_FAIL] [EXPECT <regex...>]
#                       [FORBID <regex...>] [ONCE <regex>]): runs a whole program and checks its exit
# status and output (tests/run_and_check.cmake). Use MPIEXEC_PREFIX to run it under mpirun.
set(LLMTRAIN_MPIEXEC ${MPIEXEC_EXECUTABLE} --oversubscribe ${MPIEXEC_NUMPROC_FLAG})
function(llmtrain_command_test name)
  cmake_parse_arguments(ARG "EXPECT_FAIL" "LABEL;ONCE" "CMD;EXPECT;FORBID" ${ARGN})
  # Lists cross the command line joined by "@@" (a ";" would split the -D argument).
  string(JOIN "@@" cmd ${ARG_CMD})
  string(JOIN "@@" expect ${ARG_EXPECT})
  string(JOIN "@@" forbid ${ARG_FORBID})
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" "-DEXPECT=${expect}" "-DFORBID=${forbid}"
                   "-DONCE=${ARG_ONCE}" "-DEXPECT_FAIL=${ARG_EXPECT_FAIL}"
                   -P ${PROJECT_SOURCE_DIR}/tests/run_and_check.cmake)
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT 300
                       ENVIRONMENT "${LLMTRAIN_MPI_ENV};LLMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# llmtrain_gpu_test(NAME SOURCES <files> LIBS <targets> [TIMEOUT s]): a GoogleTest program of device checks,
# labelled `gpu` and registered in every build. Its main (tests/gpu_test_main.cpp) exits 77, which ctest
# reports as skipped, where no CUDA device is visible; a build without CUDA compiles none of its sources,
# only a program that says so and exits 77 (tests/gpu_test_absent.cpp).
function(llmtrain_gpu_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(LLMTRAIN_ENABLE_CUDA)
    add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/gpu_test_main.cpp)
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} CUDA::cudart GTest::gtest llmtrain_warnings)
  else()
    add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/gpu_test_absent.cpp)
  endif()
  target_compile_definitions(${name} PRIVATE LLMTRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS gpu TIMEOUT ${ARG_TIMEOUT} SKIP_RETURN_CODE 77
                       ENVIRONMENT "LLMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
