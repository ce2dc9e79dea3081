# perfkit's CMake package (installed beside perfkitTargets.cmake):
#   find_package(perfkit 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE perfkit::perfkit)         # libperfkit.so
#   target_link_libraries(app PRIVATE perfkit::perfkit_static)  # libperfkit.a
# The static target needs the development files of libdw, libelf, libzstd, zlib,
# libtraceevent and capstone (found with pkg-config), libpfm4 and libiberty; without them only the shared target
# is defined.
include(${CMAKE_CURRENT_LIST_DIR}/perfkitTargets.cmake)
if(NOT TARGET perfkit::perfkit_static)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(perfkit_deps QUIET IMPORTED_TARGET libdw libelf libzstd zlib
      libtraceevent capstone)
  endif()
  find_library(PERFKIT_PFM_LIBRARY pfm)
  find_library(PERFKIT_IBERTY_LIBRARY NAMES libiberty.a iberty)
  if(TARGET PkgConfig::perfkit_deps AND PERFKIT_PFM_LIBRARY AND PERFKIT_IBERTY_LIBRARY)
    include(${CMAKE_CURRENT_LIST_DIR}/perfkitStaticTargets.cmake)
  elseif(NOT ${CMAKE_FIND_PACKAGE_NAME}_FIND_QUIETLY)
    message(STATUS "perfkit: perfkit::perfkit_static not defined (the development files "
      "of libdw, libelf, libzstd, zlib, libtraceevent, capstone, libpfm4 or libiberty are missing)")
  endif()
endif()
