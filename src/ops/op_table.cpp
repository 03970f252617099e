// The op table as data (names and kinds); see op_table.def.
#include "graft/ops/op_table.h"

namespace graft {
namespace {
constexpr OpInfoRow kRows[] = {
#define GRAFT_OP(name, kind) {#name, OpKind::kind},
#include "op_table.def"
#undef GRAFT_OP
};
constexpr size_t kOpCount = sizeof(kRows) / sizeof(kRows[0]);
}  // namespace

size_t op_count() { return kOpCount; }
const OpInfoRow& op_row(size_t i) { return kRows[i]; }

}  // namespace graft
