# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` gives a C++ program of your own: the public headers, the static libraries
# core, recorder, recording, flashback and verify (and bridge where Fast DDS was found, view where
# Boost was), an exported CMake package (find_package(cerulion COMPONENTS ...)) and pkg-config
# files cerulion (core), cerulion-recorder, cerulion-recording, cerulion-flashback and
# cerulion-verify (and cerulion-view).

include(CMakePackageConfigHelpers)

set(CERULION_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cerulion)

# cerulion/version.hpp: generated into the build tree (cerulion::core_headers points there) and installed.
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in ${PROJECT_BINARY_DIR}/include/cerulion/version.hpp @ONLY)

# An export set per component, so that cerulionConfig.cmake loads a component's targets, and looks
# for its dependencies, only when a program asks for it.
install(TARGETS cerulion_core_headers cerulion_core EXPORT cerulion-core ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
foreach(component recorder recording flashback ros2)
  install(TARGETS cerulion_${component} EXPORT cerulion-${component} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
endforeach()
# verify runs its command with the child-process helper: its archive goes with verify's (its
# header is verify's private business and stays in the source tree).
install(TARGETS cerulion_verify cerulion_child_process EXPORT cerulion-verify ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ ${PROJECT_SOURCE_DIR}/recorder/include/
                  ${PROJECT_SOURCE_DIR}/recording/include/ ${PROJECT_SOURCE_DIR}/flashback/include/ ${PROJECT_SOURCE_DIR}/ros2/include/
                  ${PROJECT_SOURCE_DIR}/verify/include/ ${PROJECT_BINARY_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev FILES_MATCHING PATTERN "*.hpp")
# The bridge, where Fast DDS was found: a program asking for it finds fastrtps too (cerulionConfig).
set(CERULION_PACKAGE_HAS_BRIDGE FALSE)
set(CERULION_PACKAGE_COMPONENTS core recorder recording flashback ros2 verify)
if(TARGET cerulion_bridge)
  set(CERULION_PACKAGE_HAS_BRIDGE TRUE)
  list(APPEND CERULION_PACKAGE_COMPONENTS bridge)
  install(TARGETS cerulion_bridge EXPORT cerulion-bridge ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bridge/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
          FILES_MATCHING PATTERN "*.hpp")
endif()
# The view, where Boost was found to build it: Boost is in its sources only, so a program asking
# for it needs fmt (cerulionConfig), not Boost.
set(CERULION_PACKAGE_HAS_VIEW FALSE)
if(TARGET cerulion_view)
  set(CERULION_PACKAGE_HAS_VIEW TRUE)
  list(APPEND CERULION_PACKAGE_COMPONENTS view)
  install(TARGETS cerulion_view EXPORT cerulion-view ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/view/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
          FILES_MATCHING PATTERN "*.hpp")
endif()
foreach(component IN LISTS CERULION_PACKAGE_COMPONENTS)
  install(EXPORT cerulion-${component} NAMESPACE cerulion:: DESTINATION ${CERULION_INSTALL_CMAKEDIR}
          FILE cerulion-${component}-targets.cmake COMPONENT dev)
endforeach()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cerulionConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cerulionConfig.cmake
                              INSTALL_DESTINATION ${CERULION_INSTALL_CMAKEDIR})
# Before 1.0 a minor release may change the API, so 0.1 does not satisfy a request for 0.2 or the
# reverse; SameMajorVersion would accept any 0.x. From 1.0 on, SameMajorVersion is the promise.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cerulionConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cerulionConfig.cmake ${PROJECT_BINARY_DIR}/cerulionConfigVersion.cmake
        DESTINATION ${CERULION_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config, for builds without CMake. The prefix is found from the .pc file's own place
# (${pcfiledir}), so `cmake --install --prefix ANY` gives a file that points at ANY.
file(RELATIVE_PATH CERULION_PC_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" CERULION_PC_PREFIX "${CERULION_PC_PREFIX}")
set(CERULION_PC_PREFIX "\${pcfiledir}/${CERULION_PC_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(CERULION_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(CERULION_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(CERULION_PC_FILES cerulion cerulion-recorder cerulion-recording cerulion-flashback cerulion-ros2 cerulion-verify)
if(CERULION_PACKAGE_HAS_VIEW)
  list(APPEND CERULION_PC_FILES cerulion-view)
endif()
foreach(pc IN LISTS CERULION_PC_FILES)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()
