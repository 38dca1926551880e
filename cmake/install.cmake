# SPDX-License-Identifier: Apache-2.0
# `make install` and `make package`: the binary (stripped, its debug information split off), the
# man page and the bash completion, installed by `cmake --install` and packed into a .deb by
# CPack from the same rules.
include(GNUInstallDirs)
# Installing (and CPack's preinstall step) builds nothing: `make install` and `make package`
# build the binary and the completion first, not the tests and benchmarks `all` holds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The completion script, written by the binary from its own CLI definition.
set(WP_COMPLETION ${CMAKE_BINARY_DIR}/completion/writepath)
add_custom_command(
  OUTPUT ${WP_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completion
  COMMAND sh -c "$<TARGET_FILE:writepath> completion bash > ${WP_COMPLETION}.tmp"
  COMMAND ${CMAKE_COMMAND} -E rename ${WP_COMPLETION}.tmp ${WP_COMPLETION}
  DEPENDS writepath
  COMMENT "bash completion"
  VERBATIM)
add_custom_target(bash_completion ALL DEPENDS ${WP_COMPLETION})

find_program(WP_OBJCOPY NAMES objcopy REQUIRED)
find_program(WP_READELF NAMES readelf REQUIRED)
install(CODE "
  set(WP_BINARY \"$<TARGET_FILE:writepath>\")
  set(WP_OBJCOPY \"${WP_OBJCOPY}\")
  set(WP_READELF \"${WP_READELF}\")
  set(WP_BINDIR \"${CMAKE_INSTALL_BINDIR}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_stripped.cmake)
install(FILES ${CMAKE_SOURCE_DIR}/docs/writepath.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The licences (LICENSE), in Debian's machine-readable form where a .deb keeps them.
install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/writepath)
install(FILES ${WP_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
# `writepath serve` deployed: the systemd unit where systemd looks for a package's units, and
# the dashboard, manifests and configs for the operator to copy (deploy/).
# The unit names /usr/bin/writepath; installed elsewhere it names the binary under that prefix.
install(CODE "
  file(READ \"${CMAKE_SOURCE_DIR}/deploy/systemd/writepath-serve.service\" unit)
  string(REPLACE \"/usr/bin/writepath\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/writepath\"
         unit \"\${unit}\")
  set(unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  message(STATUS \"Installing: \${unit_dir}/writepath-serve.service\")
  file(MAKE_DIRECTORY \"\${unit_dir}\")
  file(WRITE \"\${unit_dir}/writepath-serve.service\" \"\${unit}\")")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/writepath/deploy)

# ---- the .deb -------------------------------------------------------------------------------
set(WRITEPATH_MAINTAINER "writepath maintainers <writepath@localhost>"
    CACHE STRING "The .deb's Maintainer field")
find_program(DPKG dpkg)
if(DPKG)
  execute_process(COMMAND ${DPKG} --print-architecture OUTPUT_VARIABLE WP_DEB_ARCH
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${WP_DEB_ARCH})
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME writepath)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "eBPF tracer following each write from the syscall to the disk's cache flush")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "writepath follows each write and fsync through the page cache, writeback, bio, block\n\
request, NVMe command and the device's cache FLUSH, and stitches the kernel's events into\n\
one timeline per write and per sync: when it became durable, and where a slow sync's time\n\
went. It also runs the write-path scenarios it explains (load, demo).")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${WRITEPATH_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from the libraries the binary links (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES OFF)  # the install step strips, keeping the debug file
include(CPack)

# ---- tests (no root needed) -----------------------------------------------------------------
if(WRITEPATH_TESTS)
  add_test(NAME install.docs_match_help
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/docs_test.sh $<TARGET_FILE:writepath>
                   ${CMAKE_SOURCE_DIR}/docs/writepath.1 ${WP_COMPLETION})
  add_test(NAME install.completion
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/completion_test.sh ${WP_COMPLETION})
  add_test(NAME install.destdir
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/install_test.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR})
  add_test(NAME install.package
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/package_test.sh ${CMAKE_BINARY_DIR})
  add_test(NAME install.spdx COMMAND bash ${CMAKE_SOURCE_DIR}/tests/spdx_check.sh ${CMAKE_SOURCE_DIR})
  # The gates on the tree itself (tests/lint_check.sh).
  add_test(NAME lint.format COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint_check.sh format
                                    ${CMAKE_SOURCE_DIR})
  add_test(NAME lint.shellcheck COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lint_check.sh shellcheck
                                        ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint.format lint.shellcheck PROPERTIES LABELS lint)
  set_tests_properties(install.docs_match_help install.completion install.destdir
                       install.package install.spdx PROPERTIES LABELS install)
endif()
