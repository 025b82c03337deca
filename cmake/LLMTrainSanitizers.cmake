# Instrumented builds. Both instrument every C/C++ target of the project (libraries included, so a bug is
# caught where it happens), never the CUDA sources; each lives in its own build tree:
#   LLMTRAIN_SANITIZE=address,undefined   CI's second tree (build-asan/, scripts/test.sh): the unit and MPI
#                                         tests under AddressSanitizer + UBSan, any compiler
#   LLMTRAIN_FUZZ=ON                      the libFuzzer targets of tests/fuzz (clang only; scripts/fuzz.sh)
set(LLMTRAIN_SANITIZE "" CACHE STRING "Sanitizers to build every target with, e.g. address,undefined")
option(LLMTRAIN_FUZZ "Build tests/fuzz as libFuzzer targets with ASan + UBSan (needs clang)" OFF)

set(_sanitizers "${LLMTRAIN_SANITIZE}")
if(LLMTRAIN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LLMTRAIN_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)")
  endif()
  set(_sanitizers "fuzzer-no-link,address,undefined")
endif()
if(_sanitizers)
  if(LLMTRAIN_ENABLE_CUDA)
    message(FATAL_ERROR "sanitized builds instrument host code only: configure with -DLLMTRAIN_ENABLE_CUDA=OFF")
  endif()
  # A UBSan finding stops the program (a test that only prints it would pass); frame pointers give
  # readable stacks at -O1.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${_sanitizers}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  string(REPLACE "fuzzer-no-link," "" _link_sanitizers "${_sanitizers}")
  add_link_options(-fsanitize=${_link_sanitizers})
endif()
