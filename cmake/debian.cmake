# SPDX-License-Identifier: Apache-2.0
# The Debian packages (CERULION_DEBIAN, which scripts/package.sh sets; `cpack -G DEB` in the build
# directory makes them). CPack rather than debhelper: it packages the build the project already
# makes, with the same flags, and needs no debian/ source package or build tools beyond cmake and
# dpkg-dev; dpkg-shlibdeps still computes each package's Depends from what its programs link.
# Three packages, so that a robot that runs cerulion gets neither a compiler's needs nor Python:
#   cerulion          the command and its cerulion-<command> links, its plugins, man pages,
#                     completions, the flashback systemd units and /etc/default/cerulion-flashback
#   cerulion-dev      headers, static libraries, CMake and pkg-config files
#   python3-cerulion  the Python package, for Debian's python3
# The install components of the same names (runtime, dev, python) say which file goes where.
if(NOT CERULION_DEBIAN)
  return()
endif()
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "CERULION_DEBIAN needs -DCMAKE_INSTALL_PREFIX=/usr (it is ${CMAKE_INSTALL_PREFIX})")
endif()

# The changelog's newest entry is the version packaged: a release bumps both or neither.
file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog cerulion_changelog_top LIMIT_COUNT 1)
if(NOT cerulion_changelog_top MATCHES "^cerulion \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "packaging/debian/changelog's newest entry is not version ${PROJECT_VERSION}: ${cerulion_changelog_top}")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cerulion)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cerulion maintainers")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "cerulion maintainers <maintainers@users.noreply.a-seed-38f044f8.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Installed with DESTDIR into CPack's staging directory: /etc/default's file is the one absolute
# destination, and without DESTDIR it would land in the building machine's /etc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)

set(CERULION_DEBIAN_COMPONENTS runtime dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME cerulion)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "zero-copy shared-memory messaging for robot processes
cerulion carries messages between processes on one machine through shared
memory, without copying them, and records what they said into MCAP files.

This package holds the cerulion command (pub, echo, topic, ping, record,
play, flashback, bridge, view, verify, diff...), its man pages and shell
completions, and the systemd units that keep a flashback recorder running
for a domain (cerulion-flashback@DOMAIN.service, system or user).")
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/conffiles.in ${PROJECT_BINARY_DIR}/debian/conffiles @ONLY)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm ${PROJECT_BINARY_DIR}/debian/conffiles)

# The static libraries need what cerulionConfig.cmake and the .pc files ask for when a program
# links them: development packages, which no linked library names, so they are listed here.
set(CPACK_DEBIAN_DEV_PACKAGE_NAME cerulion-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libfmt-dev, libzstd-dev, liblz4-dev, zlib1g-dev, nettle-dev, nlohmann-json3-dev, pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "cmake, libfastrtps-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "zero-copy shared-memory messaging for robot processes (development files)
cerulion carries messages between processes on one machine through shared
memory, without copying them, and records what they said into MCAP files.

This package holds the C++20 headers and static libraries (core, recorder,
recording, flashback, verify, and bridge and view where built), the CMake
package (find_package(cerulion COMPONENTS ...)) and pkg-config files.")

if(TARGET cerulion_python)
  list(APPEND CERULION_DEBIAN_COMPONENTS python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-cerulion)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  # The extension module is built for one interpreter (_cerulion.cpython-3XY-...so): that one.
  math(EXPR cerulion_python_next "${CERULION_PYTHON_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "python3 (>= ${CERULION_PYTHON_VERSION_MAJOR}.${CERULION_PYTHON_VERSION_MINOR}), python3 (<< ${CERULION_PYTHON_VERSION_MAJOR}.${cerulion_python_next})")
  # Sample.as_array() gives numpy arrays; the rest of the package does without numpy.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS python3-numpy)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
      ${PROJECT_SOURCE_DIR}/packaging/debian/python3-cerulion/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/python3-cerulion/prerm)
  set(CPACK_DEBIAN_PYTHON_DESCRIPTION "zero-copy shared-memory messaging for robot processes (Python 3)
cerulion carries messages between processes on one machine through shared
memory, without copying them, and records what they said into MCAP files.

This package holds the Python 3 module cerulion: publishers, subscribers,
wait sets and recordings, interoperating with the C++ library and command.")
endif()
set(CPACK_COMPONENTS_ALL ${CERULION_DEBIAN_COMPONENTS})

# Every package's /usr/share/doc/PACKAGE: the license (DEP-5, pointing at Debian's copy of the
# Apache-2.0 text) and the changelog.
cerulion_gzip(cerulion_changelog ${PROJECT_SOURCE_DIR}/packaging/debian/changelog changelog)
add_custom_target(cerulion_changelog_compressed ALL DEPENDS ${cerulion_changelog})
foreach(component IN LISTS CERULION_DEBIAN_COMPONENTS)
  string(TOUPPER ${component} upper)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright ${cerulion_changelog}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${upper}_PACKAGE_NAME} COMPONENT ${component})
endforeach()

# The static libraries lose their debug information, as dh_strip does for a Debian package's
# archives (CPACK_STRIP_FILES strips programs and shared objects only): with it cerulion-dev
# would take some 150 MiB.
install(CODE "file(GLOB archives \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libcerulion_*.a\")
  foreach(archive IN LISTS archives)
    execute_process(COMMAND ${CMAKE_STRIP} --strip-debug --enable-deterministic-archives \${archive} COMMAND_ERROR_IS_FATAL ANY)
  endforeach()" COMPONENT dev)

include(CPack)
