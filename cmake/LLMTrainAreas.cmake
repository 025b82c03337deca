# llmtrain_add_area(NAME DEPENDS <targets...> [PRIVATE_DEPENDS <targets...>]): one static library per area
# (src/<NAME>/*.cpp), named llmtrain_<NAME>, with the public headers in include/llmtrain/<NAME>/. Areas depend
# on each other only through the DEPENDS list, so the layout shows the architecture and a broken area does not
# break the others. PRIVATE_DEPENDS: external libraries used only inside the area's sources, not by its headers
# (its users neither see their headers nor get them as a dependency).
# CUDA sources (<NAME>/cuda/*.cu and *.cpp) of an area are compiled only when LLMTRAIN_ENABLE_CUDA is ON, and
# with -Werror (the .cu files get it from llmtrain_warnings' CUDA flags, the .cpp files here).
function(llmtrain_add_area name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  file(GLOB _sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp")
  if(LLMTRAIN_ENABLE_CUDA)
    file(GLOB _cuda_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${name}/cuda/*.cu"
                                              "${CMAKE_CURRENT_SOURCE_DIR}/${name}/cuda/*.cpp")
    list(APPEND _sources ${_cuda_sources})
    # The host sources beside the kernels are held to the kernels' rule: any warning fails the build.
    set(_cuda_host_sources ${_cuda_sources})
    list(FILTER _cuda_host_sources INCLUDE REGEX "\\.cpp$")
    set_property(SOURCE ${_cuda_host_sources} APPEND PROPERTY COMPILE_OPTIONS -Werror)
  endif()
  add_library(llmtrain_${name} STATIC ${_sources})
  target_include_directories(llmtrain_${name} PUBLIC "${PROJECT_SOURCE_DIR}/include"
                                              PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(llmtrain_${name} PUBLIC ${ARG_DEPENDS} PRIVATE ${ARG_PRIVATE_DEPENDS} llmtrain_warnings)
  set_target_properties(llmtrain_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
