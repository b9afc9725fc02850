#include <iostream>

#include "cli/command.hpp"

int main(int argc, char** argv) { return edgeplan::cli::run(argc, argv, std::cout, std::cerr); }
