# Installation: `cmake --install BUILD --prefix PREFIX` puts the programs in PREFIX/bin, the
# libraries and their headers in PREFIX/lib and PREFIX/include/pipesim, the SimGrid engine
# plugin in PREFIX/lib/pipesim, the bash completion in PREFIX/share/bash-completion/completions,
# and a CMake package so that another project finds the libraries with
#
#   find_package(pipesim REQUIRED)
#   target_link_libraries(app PRIVATE pipesim::analysis)
#
# (docs/install.md). The GPU side (`calibration`, CUDA) is a program, not an exported library.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PIPESIM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pipesim")
set(PIPESIM_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/pipesim")

# The libraries, in dependency order. Each keeps its headers in DIR/include/NAME/, installed
# as PREFIX/include/pipesim/NAME/ so that `#include "analysis/run.hpp"` reads the same in the
# source tree and against an installed one.
set(pipesim_exported_libraries
    fileio schedules models sim sim_simgrid_spec sim_simgrid viz viz_render analysis sweep calibration_host)
foreach(library IN LISTS pipesim_exported_libraries)
  get_target_property(build_dirs ${library} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT build_dirs)  # a library without headers of its own (viz_render)
    set(build_dirs "")
  endif()
  set(interface_dirs "")
  foreach(dir IN LISTS build_dirs)
    if(NOT IS_ABSOLUTE "${dir}")
      get_target_property(source_dir ${library} SOURCE_DIR)
      set(dir "${source_dir}/${dir}")
    endif()
    list(APPEND interface_dirs "$<BUILD_INTERFACE:${dir}>")
    install(DIRECTORY "${dir}/" DESTINATION "${PIPESIM_INSTALL_INCLUDEDIR}"
            FILES_MATCHING PATTERN "*.hpp")
  endforeach()
  list(APPEND interface_dirs "$<INSTALL_INTERFACE:${PIPESIM_INSTALL_INCLUDEDIR}>")
  set_target_properties(${library} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${interface_dirs}")
endforeach()

install(TARGETS ${pipesim_exported_libraries} pipesim_warnings
        EXPORT pipesimTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${PIPESIM_INSTALL_INCLUDEDIR}")
install(EXPORT pipesimTargets NAMESPACE pipesim:: DESTINATION "${PIPESIM_INSTALL_CMAKEDIR}")

install(TARGETS pipesim RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
# The SimGrid engine plugin that simulate() loads (sim/simgrid/CMakeLists.txt).
install(TARGETS pipesim-simgrid LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/pipesim")
if(TARGET pipesim-gpu)
  install(TARGETS pipesim-gpu RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()
install(FILES "${PROJECT_SOURCE_DIR}/cli/completion/pipesim.bash"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" RENAME pipesim)

set(PIPESIM_USES_GRAPHVIZ ${PIPESIM_HAVE_GRAPHVIZ})
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/pipesimConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/pipesimConfig.cmake"
                              INSTALL_DESTINATION "${PIPESIM_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/pipesimConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/pipesimConfig.cmake"
              "${PROJECT_BINARY_DIR}/pipesimConfigVersion.cmake"
        DESTINATION "${PIPESIM_INSTALL_CMAKEDIR}")
