# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` (and the Debian package cerulion) puts beside the binary: man pages,
# completions, the flashback systemd units and their environment file. With CERULION_DEBIAN
# (scripts/package.sh, cmake/debian.cmake) the man pages are compressed, as Debian wants them.

install(FILES ${PROJECT_SOURCE_DIR}/completions/cerulion.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cerulion OPTIONAL)
install(FILES ${PROJECT_SOURCE_DIR}/completions/_cerulion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions OPTIONAL)
install(FILES ${PROJECT_SOURCE_DIR}/completions/cerulion.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d OPTIONAL)

# cerulion_gzip(OUTPUT_VAR SOURCE NAME): SOURCE compressed at build time into the build tree as
# NAME.gz, the way Debian wants it (-n: no name or time inside, so the same file gives the same bytes).
function(cerulion_gzip output source name)
  set(gz ${PROJECT_BINARY_DIR}/gz/${name}.gz)
  get_filename_component(dir ${gz} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(OUTPUT ${gz} COMMAND sh -c "gzip -9nc \"$1\" > \"$2\"" sh ${source} ${gz}
                     DEPENDS ${source} VERBATIM)
  set(${output} ${gz} PARENT_SCOPE)
endfunction()

file(GLOB cerulion_man_pages CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/man/*.1)
if(CERULION_DEBIAN)
  set(cerulion_compressed "")
  foreach(page IN LISTS cerulion_man_pages)
    get_filename_component(name ${page} NAME)
    cerulion_gzip(gz ${page} man/${name})
    list(APPEND cerulion_compressed ${gz})
    install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endforeach()
  add_custom_target(cerulion_man_pages_compressed ALL DEPENDS ${cerulion_compressed})
else()
  install(FILES ${cerulion_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# The flashback keeper as a service: a template unit, instance = domain, for the system's manager
# and for a user's (`systemctl --user`: a topic belongs to its creator's uid, and a keeper sees
# only its own user's topics). Under /usr the environment file is /etc/default's; under another
# prefix it stays under that prefix, as everything `cmake --install --prefix` writes does.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(cerulion_default_dir ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default)
else()
  set(cerulion_default_dir ${CMAKE_INSTALL_SYSCONFDIR}/default)
endif()
set(CERULION_UNIT_ENVIRONMENT_FILE ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/cerulion-flashback)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/cerulion-flashback.default
        DESTINATION ${cerulion_default_dir} RENAME cerulion-flashback)

# Hardening, as far as the keeper still works: it needs the machine's /dev/shm (topics and its
# store: ProtectSystem= and PrivateTmp= leave /dev as it is, PrivateDevices= binds the machine's
# /dev/shm in), other processes in /proc (a publisher's death is told by its pid and start time:
# no ProtectProc=invisible), and its store to outlive it (no RemoveIPC=, which deletes a user's
# /dev/shm files when the unit stops). Dumps are as private as the topics they hold (UMask, as the
# topics' mode 0600). These need no namespace, so a user's manager applies them too:
set(cerulion_hardening
    UMask=0077 NoNewPrivileges=yes LockPersonality=yes MemoryDenyWriteExecute=yes RestrictRealtime=yes
    RestrictNamespaces=yes RestrictSUIDSGID=yes SystemCallArchitectures=native RestrictAddressFamilies=AF_UNIX)
# These need a mount namespace and capabilities only the system's manager has:
set(cerulion_system_hardening
    ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes PrivateNetwork=yes
    ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes ProtectControlGroups=yes
    ProtectClock=yes ProtectHostname=yes CapabilityBoundingSet=)

# cerulion_unit(DIR SCOPE STATE WANTED_BY USER_ENVIRONMENT_FILE HARDENING...): the template unit
# for one manager, installed into DIR (relative to the prefix).
function(cerulion_unit dir scope state wanted_by user_environment_file)
  set(CERULION_UNIT_SCOPE "${scope}")
  set(CERULION_UNIT_STATE "${state}")
  set(CERULION_UNIT_WANTED_BY ${wanted_by})
  set(CERULION_UNIT_USER_ENVIRONMENT_FILE "${user_environment_file}")
  list(JOIN ARGN "\n" CERULION_UNIT_HARDENING)
  set(out ${PROJECT_BINARY_DIR}/systemd/${dir}/cerulion-flashback@.service)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/systemd/cerulion-flashback@.service.in ${out} @ONLY)
  install(FILES ${out} DESTINATION ${dir})
endfunction()
cerulion_unit(lib/systemd/system "" "/var/lib" multi-user.target "" ${cerulion_hardening} ${cerulion_system_hardening})
# %S of a user's manager: ~/.config in Debian 12's systemd 252, $XDG_STATE_HOME in later ones.
cerulion_unit(lib/systemd/user "--user " "%S (~/.config with systemd 252)" default.target
              "EnvironmentFile=-%E/cerulion-flashback\n" ${cerulion_hardening})
