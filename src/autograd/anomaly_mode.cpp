// Anomaly mode flags and the warning channel (graft/autograd/autograd.h).
#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>

#include "graft/autograd/autograd.h"

namespace graft {
namespace {
std::atomic<bool> g_anomaly{false};
std::atomic<bool> g_anomaly_nan{true};
std::mutex g_warn_mu;
std::function<void(const std::string&)> g_warn_handler;
}  // namespace

namespace autograd {
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
bool AnomalyMode::should_check_nan() { return g_anomaly_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  if (enabled && !g_anomaly.load())
    warn(
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
        "debugging.");
  g_anomaly = enabled;
  g_anomaly_nan = check_nan;
}
DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : prev_(AnomalyMode::is_enabled()), prev_nan_(AnomalyMode::should_check_nan()) {
  AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_, prev_nan_); }

void set_warning_handler(std::function<void(const std::string&)> handler) {
  std::lock_guard<std::mutex> g(g_warn_mu);
  g_warn_handler = std::move(handler);
}
void warn(const std::string& message) {
  std::function<void(const std::string&)> h;
  {
    std::lock_guard<std::mutex> g(g_warn_mu);
    h = g_warn_handler;
  }
  if (h)
    h(message);
  else
    std::fprintf(stderr, "UserWarning: %s\n", message.c_str());
}
}  // namespace autograd
}  // namespace graft
