// toml++'s implementation, compiled once into edgeplan for a portable binary (EDGEPLAN_PORTABLE: see
// cmake/Dependencies.cmake): every other file includes toml++ with TOML_HEADER_ONLY=0 and links to this one.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
