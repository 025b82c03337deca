# Finds Kokkos and Kokkos Kernels and provides the target llmtrain::kokkos.
#
# Two layouts are accepted:
#  - a site build of Kokkos 4.x (CUDA, OpenMP or Serial backend) named by Kokkos_ROOT: its own CMake
#    config is used;
#  - Debian's Trilinos 13.2 build (libtrilinos-kokkos-dev, Kokkos 3.4.1, Serial backend). Its installed
#    CMake config names /usr/lib/include as the include directory, which does not exist, so we locate the
#    headers (/usr/include/trilinos) and libraries (libtrilinos_kokkos*.so) ourselves.
if(TARGET llmtrain::kokkos)
  set(LLMTrainKokkos_FOUND TRUE)
  return()
endif()

if(DEFINED Kokkos_ROOT OR DEFINED ENV{Kokkos_ROOT})
  find_package(Kokkos 4 CONFIG REQUIRED)
  find_package(KokkosKernels CONFIG REQUIRED)
  add_library(llmtrain::kokkos INTERFACE IMPORTED)
  target_link_libraries(llmtrain::kokkos INTERFACE Kokkos::kokkos Kokkos::kokkoskernels)
  set(LLMTrainKokkos_VERSION ${Kokkos_VERSION})
else()
  find_path(LLMTrainKokkos_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES trilinos)
  find_path(LLMTrainKokkos_KERNELS_INCLUDE_DIR KokkosBlas3_gemm.hpp PATH_SUFFIXES trilinos)
  find_library(LLMTrainKokkos_CORE_LIBRARY NAMES trilinos_kokkoscore kokkoscore)
  find_library(LLMTrainKokkos_KERNELS_LIBRARY NAMES trilinos_kokkoskernels kokkoskernels)
  if(LLMTrainKokkos_INCLUDE_DIR AND EXISTS "${LLMTrainKokkos_INCLUDE_DIR}/KokkosCore_config.h")
    file(STRINGS "${LLMTrainKokkos_INCLUDE_DIR}/KokkosCore_config.h" _kv REGEX "#define KOKKOS_VERSION [0-9]+")
    string(REGEX MATCH "[0-9]+" _kv "${_kv}")
    if(_kv)
      math(EXPR _major "${_kv} / 10000")
      math(EXPR _minor "${_kv} / 100 % 100")
      math(EXPR _patch "${_kv} % 100")
      set(LLMTrainKokkos_VERSION "${_major}.${_minor}.${_patch}")
    endif()
  endif()
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(LLMTrainKokkos
    REQUIRED_VARS LLMTrainKokkos_INCLUDE_DIR LLMTrainKokkos_KERNELS_INCLUDE_DIR
                  LLMTrainKokkos_CORE_LIBRARY LLMTrainKokkos_KERNELS_LIBRARY
    VERSION_VAR LLMTrainKokkos_VERSION)
  if(LLMTrainKokkos_FOUND)
    add_library(llmtrain::kokkos INTERFACE IMPORTED)
    # SYSTEM: Kokkos 3.4 headers are not -Wextra clean under g++ 12; our own code must be.
    target_include_directories(llmtrain::kokkos SYSTEM INTERFACE
      ${LLMTrainKokkos_INCLUDE_DIR} ${LLMTrainKokkos_KERNELS_INCLUDE_DIR})
    target_link_libraries(llmtrain::kokkos INTERFACE
      ${LLMTrainKokkos_KERNELS_LIBRARY} ${LLMTrainKokkos_CORE_LIBRARY} ${CMAKE_DL_LIBS})
  endif()
endif()
