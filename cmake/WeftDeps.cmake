# Third-party libraries, all from Debian 12 packages (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(INIH REQUIRED IMPORTED_TARGET inih)
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
# auth/: keys, HMAC, HKDF, AEAD from OpenSSL 3 (never hand-written primitives)
pkg_check_modules(LIBCRYPTO REQUIRED IMPORTED_TARGET libcrypto>=3.0)
# weft-mount (client/mount/): the FUSE 3 low-level API
pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET fuse3>=3.12)
# nbdkit-weft-plugin (client/nbd/): WEFT_WITH_NBD=AUTO builds it when nbdkit's
# plugin header is there (Debian: nbdkit-plugin-dev), ON requires it (the
# Debian package build: its nbdkit-plugin-weft package must not come out
# empty); the plugin directory comes from nbdkit itself.
find_path(NBDKIT_INCLUDE_DIR nbdkit-plugin.h)
find_program(NBDKIT_PROGRAM nbdkit)
if(WEFT_WITH_NBD STREQUAL "AUTO")
	if(NBDKIT_INCLUDE_DIR)
		set(WEFT_WITH_NBD ON)
	else()
		set(WEFT_WITH_NBD OFF)
	endif()
elseif(WEFT_WITH_NBD AND NOT NBDKIT_INCLUDE_DIR)
	message(FATAL_ERROR "WEFT_WITH_NBD=ON but nbdkit-plugin.h not found: run scripts/install-deps.sh")
endif()
# weft osd create: signatures on a device (util-linux's libblkid)
pkg_check_modules(BLKID REQUIRED IMPORTED_TARGET blkid)
# /metrics for Prometheus in every daemon (metrics/): an HTTP server library
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)

# weft_backend_detect(VAR pkg...) resolves AUTO to ON/OFF by whether the
# pkg-config modules exist; ON without them stops the configure.
function(weft_backend_detect var)
	pkg_check_modules(${var}_PC QUIET IMPORTED_TARGET ${ARGN})
	if(${var} STREQUAL "AUTO")
		if(${var}_PC_FOUND)
			set(${var} ON PARENT_SCOPE)
		else()
			set(${var} OFF PARENT_SCOPE)
		endif()
	elseif(${var} AND NOT ${var}_PC_FOUND)
		message(FATAL_ERROR "${var}=ON but ${ARGN} not found: run scripts/install-deps.sh")
	endif()
endfunction()

weft_backend_detect(WEFT_WITH_VERBS libibverbs librdmacm)
weft_backend_detect(WEFT_WITH_UCX ucx)
