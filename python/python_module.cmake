# Whether to build the Python module (python/). The libraries it links are position-independent
# (CMakeLists.txt), as the SimGrid engine plugin needs them too.
#
# The module is built for Debian's own interpreter, /usr/bin/python3, the one that
# python3-pybind11 and python3-numpy install into, even when another python3 comes first on
# PATH (pyenv, conda, a venv); -DPython3_EXECUTABLE=... picks another one.
set(PIPESIM_PYTHON AUTO CACHE STRING "Build the Python module: AUTO, ON or OFF")
set_property(CACHE PIPESIM_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(PIPESIM_HAVE_PYTHON OFF)
if(NOT PIPESIM_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(PIPESIM_HAVE_PYTHON ON)
    message(STATUS "pipesim: Python module for ${Python3_EXECUTABLE} (Python ${Python3_VERSION}, "
                   "pybind11 ${pybind11_VERSION})")
  elseif(PIPESIM_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "PIPESIM_PYTHON=ON but Python 3 development files or pybind11 were not "
                        "found (Debian: python3-dev pybind11-dev python3-pybind11)")
  else()
    message(STATUS "pipesim: Python module not built: Python 3 development files or pybind11 "
                   "not found (Debian: python3-dev pybind11-dev python3-pybind11)")
  endif()
endif()
