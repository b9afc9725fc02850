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
if(EDGEPLAN_TESTS)
  edgeplan_require(GTest libgtest-dev)
endif()
