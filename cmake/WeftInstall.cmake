# install(): what `cmake --install` (and the Debian packages, debian/) put
# where. Paths follow GNUInstallDirs; with CMAKE_INSTALL_PREFIX=/usr the
# conf side goes to /etc. WEFT_SYSTEMD_UNITDIR is absolute or relative to
# the prefix (Debian 12: /lib/systemd/system, set by debian/rules).
set(WEFT_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING "systemd unit directory")
set(WEFT_CONF "${CMAKE_INSTALL_FULL_SYSCONFDIR}/weft/weft.conf")
set(dist ${PROJECT_SOURCE_DIR}/dist)

install(TARGETS weft-mon weft-osd weft weft-mount RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS weft_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
	NAMELINK_SKIP)
install(TARGETS weft_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
	NAMELINK_ONLY COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/weft/weft.h ${PROJECT_SOURCE_DIR}/include/weft/volume.h
	DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)
configure_file(${dist}/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/conf/weft.conf.example ${PROJECT_SOURCE_DIR}/conf/seed-cluster.conf
	DESTINATION ${CMAKE_INSTALL_DATADIR}/weft)
foreach(u weft-mon@.service weft-osd@.service weft-mount@.service)
	configure_file(${dist}/systemd/${u}.in ${PROJECT_BINARY_DIR}/systemd/${u} @ONLY)
	install(FILES ${PROJECT_BINARY_DIR}/systemd/${u} DESTINATION ${WEFT_SYSTEMD_UNITDIR})
endforeach()
install(FILES ${dist}/systemd/weft.target DESTINATION ${WEFT_SYSTEMD_UNITDIR})
install(FILES ${dist}/weft.tmpfiles DESTINATION ${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d
	RENAME weft.conf)
install(FILES ${dist}/weft.logrotate DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/logrotate.d
	RENAME weft)
install(FILES ${dist}/completion/weft
	DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# Man pages from one source each (dist/man/*.scd) with scdoc; the nbdkit
# plugin's page (section 1, nbdkit's convention) with the plugin.
find_program(SCDOC scdoc)
if(SCDOC)
	set(pages weft.8 weft-mon.8 weft-osd.8 weft-mount.8)
	if(WEFT_WITH_NBD)
		list(APPEND pages nbdkit-weft-plugin.1)
	endif()
	set(mans "")
	foreach(page ${pages})
		add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/man/${page}
			COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
			COMMAND sh -c "${SCDOC} < ${dist}/man/${page}.scd > ${PROJECT_BINARY_DIR}/man/${page}"
			DEPENDS ${dist}/man/${page}.scd VERBATIM)
		list(APPEND mans ${PROJECT_BINARY_DIR}/man/${page})
		string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
		install(FILES ${PROJECT_BINARY_DIR}/man/${page}
			DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
	endforeach()
	add_custom_target(weft_man ALL DEPENDS ${mans})
else()
	message(STATUS "weft: scdoc not found: man pages not built (scripts/install-deps.sh)")
endif()
