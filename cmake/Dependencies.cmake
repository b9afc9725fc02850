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
# `edgeplan bench` measures matrix-multiply throughput through a tuned BLAS (a hand-written loop would
# measure edgeplan's code, not the machine): OpenBLAS. The build needs its cblas.h; bench loads the library
# when it runs (src/io/host.cpp).
set(BLA_VENDOR OpenBLAS)
edgeplan_require(BLAS libopenblas-dev)
find_path(EDGEPLAN_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread openblas)
if(NOT EDGEPLAN_CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "edgeplan needs OpenBLAS's cblas.h: install the Debian package 'libopenblas-dev' "
                      "(sudo apt-get install libopenblas-dev, or run scripts/bootstrap.sh)")
endif()
