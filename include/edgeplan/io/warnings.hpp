// Warnings: things a user should know about an answer that is still given (a profile that shadows a
// built-in one, a search folder that does not exist). Readers record them as they meet them, from any thread;
// the CLI prints each once on stderr, as `edgeplan: warning: ...`, after the command's output.
#pragma once

#include <string>
#include <vector>

namespace edgeplan::io {

// Records `message` (a second identical message is dropped).
void warn(std::string message);

// The messages recorded since the last call, in text order (threads record them in any order: the output is the
// same from run to run); clears them.
std::vector<std::string> take_warnings();

}  // namespace edgeplan::io
