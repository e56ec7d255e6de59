# Build options. Backends default to ON when their packages are installed
# (see WeftDeps.cmake); forcing one ON without its package is a configure error.
option(WEFT_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(WEFT_FUZZ "Build libFuzzer targets (needs clang)" OFF)
option(WEFT_BUILD_TESTS "Build the tests (the Debian package build turns them off)" ON)
option(WEFT_DEBUG_LOG "Compile in data-path debug logs" OFF)
set(WEFT_WITH_VERBS "AUTO" CACHE STRING "Build the verbs backend: AUTO, ON or OFF")
set(WEFT_WITH_UCX "AUTO" CACHE STRING "Build the UCX backend: AUTO, ON or OFF")
set(WEFT_WITH_NBD "AUTO" CACHE STRING "Build the nbdkit plugin: AUTO, ON or OFF")

if(WEFT_SANITIZE)
	add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
		-fno-omit-frame-pointer)
	add_link_options(-fsanitize=address,undefined)
endif()
if(WEFT_DEBUG_LOG)
	add_compile_definitions(WEFT_DEBUG_LOG=1)
endif()
