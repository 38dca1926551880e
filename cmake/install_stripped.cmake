# SPDX-License-Identifier: Apache-2.0
# Installs the writepath binary stripped, its debug information split off the way Debian's
# dh_strip does: $PREFIX/lib/debug/.build-id/NN/REST.debug, found by gdb through the binary's
# build ID (for PREFIX=/usr with no setting; else `set debug-file-directory PREFIX/lib/debug`),
# and named by a .gnu_debuglink in the stripped binary.
# Run by `cmake --install` (and CPack) with WP_BINARY, WP_OBJCOPY, WP_READELF and WP_BINDIR set.
get_filename_component(root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}" ABSOLUTE)

execute_process(COMMAND ${WP_READELF} -n ${WP_BINARY} OUTPUT_VARIABLE notes
                COMMAND_ERROR_IS_FATAL ANY)
if(NOT notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "${WP_BINARY} has no build ID (link with --build-id)")
endif()
set(debug_dir "${root}/lib/debug/.build-id/${CMAKE_MATCH_1}")
set(debug_file "${debug_dir}/${CMAKE_MATCH_2}.debug")
set(binary "${root}/${WP_BINDIR}/writepath")

message(STATUS "Installing: ${debug_file}")
file(MAKE_DIRECTORY ${debug_dir})
execute_process(COMMAND ${WP_OBJCOPY} --only-keep-debug --compress-debug-sections
                        ${WP_BINARY} ${debug_file}
                COMMAND_ERROR_IS_FATAL ANY)
file(CHMOD ${debug_file} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# --add-gnu-debuglink reads the debug file for its CRC, so it runs where that file is.
message(STATUS "Installing: ${binary}")
file(MAKE_DIRECTORY "${root}/${WP_BINDIR}")
execute_process(COMMAND ${WP_OBJCOPY} --strip-all --remove-section=.comment
                        --add-gnu-debuglink=${CMAKE_MATCH_2}.debug ${WP_BINARY} ${binary}.tmp
                WORKING_DIRECTORY ${debug_dir}
                COMMAND_ERROR_IS_FATAL ANY)
file(CHMOD ${binary}.tmp PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
file(RENAME ${binary}.tmp ${binary})
list(APPEND CMAKE_INSTALL_MANIFEST_FILES ${binary} ${debug_file})
