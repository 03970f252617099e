#pragma once
/// The op table (src/ops/op_table.def) as data: names and kinds of every public op.
#include <cstddef>
#include <string_view>

namespace graft {

enum class OpKind { Differentiable, NonDifferentiable, InPlace };
struct OpInfoRow {
  std::string_view name;
  OpKind kind;
};
/// Number of ops in the table.
size_t op_count();
/// Row `i` of the table.
const OpInfoRow& op_row(size_t i);

}  // namespace graft
