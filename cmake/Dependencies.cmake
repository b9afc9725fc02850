# Every dependency comes from a Debian package through find_package; a missing one names the package.
macro(edgeplan_require package debian_package)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "edgeplan needs ${package}: install the Debian package '${debian_package}' "
                        "(sudo apt-get install ${debian_package}, or run scripts/bootstrap.sh)")
  endif()
endmacro()

edgeplan_require(CLI11 libcli11-dev CONFIG)
edgeplan_require(nlohmann_json nlohmann-json3-dev CONFIG)
edgeplan_require(tomlplusplus libtomlplusplus-dev CONFIG)
edgeplan_require(fmt libfmt-dev CONFIG)
# Remote models (src/io/http.cpp): the header at build time; libcurl4 itself is loaded at run time when needed.
edgeplan_require(CURL libcurl4-openssl-dev)

# fmt and toml++ as edgeplan_fmt and edgeplan_toml: Debian's shared libraries, or for a portable binary
# (EDGEPLAN_PORTABLE; Debian ships neither as a static library) compiled into edgeplan: fmt header-only, and
# toml++'s implementation in one file of edgeplan_io (src/io/portable/toml_implementation.cpp), as toml++
# documents.
add_library(edgeplan_fmt INTERFACE)
add_library(edgeplan_toml INTERFACE)
if(EDGEPLAN_PORTABLE)
  target_link_libraries(edgeplan_fmt INTERFACE fmt::fmt-header-only)
  get_target_property(EDGEPLAN_TOML_INCLUDE tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(edgeplan_toml SYSTEM INTERFACE ${EDGEPLAN_TOML_INCLUDE})
  # toml++ 3.3 reads floats through an std::istringstream on GCC and Clang (its preprocessor.h: "not supported by
  # any version of GCC or Clang as of 26/11/2020"); libstdc++ has had the floating-point std::from_chars since
  # GCC 11, which edgeplan needs anyway. Both round correctly, so the values are the same; the stream, built per
  # float, was a fifth of a short run's instructions.
  target_compile_definitions(edgeplan_toml INTERFACE TOML_HEADER_ONLY=0 TOML_FLOAT_CHARCONV=1)
else()
  target_link_libraries(edgeplan_fmt INTERFACE fmt::fmt)
  target_link_libraries(edgeplan_toml INTERFACE tomlplusplus::tomlplusplus)
endif()
if(EDGEPLAN_TESTS)
  edgeplan_require(GTest libgtest-dev)
endif()
