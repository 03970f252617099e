// Thread-local grad mode, inference mode and anomaly mode flags.
#include <cstdio>
#include <mutex>

#include "graft/autograd/autograd.h"
#include "graft/autograd/grad_mode.h"

namespace graft {
namespace {
thread_local bool tl_grad_enabled = true;
thread_local bool tl_inference = false;
std::atomic<bool> g_anomaly{false};
std::atomic<bool> g_anomaly_nan{true};
std::mutex g_warn_mu;
std::function<void(const std::string&)> g_warn_handler;
}  // namespace

bool GradMode::is_enabled() { return tl_grad_enabled; }
void GradMode::set_enabled(bool enabled) { tl_grad_enabled = enabled; }

InferenceMode::InferenceMode(bool enabled) : prev_inference_(tl_inference), prev_grad_(tl_grad_enabled) {
  tl_inference = enabled;
  if (enabled) tl_grad_enabled = false;
}
InferenceMode::~InferenceMode() {
  tl_inference = prev_inference_;
  tl_grad_enabled = prev_grad_;
}
bool InferenceMode::is_enabled() { return tl_inference; }

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
