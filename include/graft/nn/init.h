#pragma once
/// graft::nn::init: in-place parameter initialisers with PyTorch's formulas (torch.nn.init).
/// Each runs under no_grad, draws from `generator` (the default generator, which
/// graft::manual_seed seeds, when it is absent) and returns the tensor it filled.
#include <string>

#include "graft/core/tensor.h"

namespace graft::nn::init {

/// The recommended gain for a nonlinearity: linear/conv*/sigmoid 1, tanh 5/3, relu sqrt(2),
/// leaky_relu sqrt(2 / (1 + slope^2)), selu 3/4.
double calculate_gain(const std::string& nonlinearity, double param = 0.01);
/// (fan_in, fan_out) of a weight: [out, in, k...] -> (in * k, out * k); needs >= 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor uniform_(Tensor t, double a = 0.0, double b = 1.0, std::optional<Generator> generator = std::nullopt);
Tensor normal_(Tensor t, double mean = 0.0, double std = 1.0, std::optional<Generator> generator = std::nullopt);
Tensor constant_(Tensor t, double value);
Tensor ones_(Tensor t);
Tensor zeros_(Tensor t);
/// Identity matrix into a 2-D tensor.
Tensor eye_(Tensor t);
/// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor t, double gain = 1.0, std::optional<Generator> generator = std::nullopt);
/// N(0, gain * sqrt(2 / (fan_in + fan_out))).
Tensor xavier_normal_(Tensor t, double gain = 1.0, std::optional<Generator> generator = std::nullopt);
/// U(-b, b), b = gain(nonlinearity, a) * sqrt(3 / fan); mode "fan_in" or "fan_out".
Tensor kaiming_uniform_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu",
                        std::optional<Generator> generator = std::nullopt);
/// N(0, gain(nonlinearity, a) / sqrt(fan)).
Tensor kaiming_normal_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu",
                       std::optional<Generator> generator = std::nullopt);
/// Normal(mean, std) restricted to [a, b]: values outside are redrawn (up to 1000 rounds,
/// then clamped, which matters only for intervals far in the tails).
Tensor trunc_normal_(Tensor t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                     std::optional<Generator> generator = std::nullopt);

}  // namespace graft::nn::init
