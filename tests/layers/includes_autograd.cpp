// Compiled by the layers_* tests (tests/CMakeLists.txt) against one layer's include tree: it
// includes an autograd header, so it compiles for the layers at or above autograd and must not
// compile for core (docs/notes/architecture.md, "Layers that point one way").
#include "graft/autograd/node.h"

int main() { return 0; }
