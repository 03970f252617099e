// Cost of one cached allocate+free pair in graft's caching allocator, beside glibc
// malloc/free of the same sizes and beside the plain backend (backend:malloc), with Google
// Benchmark. The figure the issue asks for is the median of the repetitions (<= 50 ns).
//   ./build-bench/bench/alloc_bench --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include <graft/graft.h>

namespace {

using graft::alloc::AllocatorConfig;
using graft::alloc::CachingAllocator;
using graft::alloc::HostRawAllocator;

std::unique_ptr<CachingAllocator> make(const char* conf) {
  return std::make_unique<CachingAllocator>(graft::kCPU, std::make_unique<HostRawAllocator>(),
                                            AllocatorConfig::parse(conf));
}

void BM_CachingAllocFree(benchmark::State& state) {
  auto a = make("");
  const auto n = static_cast<size_t>(state.range(0));
  { graft::DataPtr warm = a->allocate(n); }  // the segment is cached from here on
  for (auto _ : state) {
    graft::DataPtr p = a->allocate(n);
    benchmark::DoNotOptimize(p.get());
  }
}

void BM_MallocBackendAllocFree(benchmark::State& state) {
  auto a = make("backend:malloc");
  const auto n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    graft::DataPtr p = a->allocate(n);
    benchmark::DoNotOptimize(p.get());
  }
}

void BM_GlibcMallocFree(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// A tensor's worth: storage allocation through the process-wide CPU allocator plus the
// TensorImpl/StorageImpl objects, as every op output pays.
void BM_EmptyTensor(benchmark::State& state) {
  const int64_t n = state.range(0) / 4;
  for (auto _ : state) {
    graft::Tensor t = graft::empty({n});
    benchmark::DoNotOptimize(t.data_ptr());
  }
}

// A mix of live sizes: 8 blocks in flight, freed out of order, small and large pools.
void BM_CachingMixed(benchmark::State& state) {
  auto a = make("");
  static const size_t sizes[] = {64, 4096, 512, 200000, 3 << 20, 1000, 65536, 12 << 20};
  graft::DataPtr live[8];
  for (int i = 0; i < 8; ++i) live[i] = a->allocate(sizes[i]);
  size_t k = 0;
  for (auto _ : state) {
    k = (k * 5 + 3) % 8;
    live[k] = a->allocate(sizes[(k + 3) % 8]);
    benchmark::DoNotOptimize(live[k].get());
  }
}

#define SIZES Arg(64)->Arg(4096)->Arg(65536)->Arg(1 << 20)->Arg(4 << 20)
BENCHMARK(BM_CachingAllocFree)->SIZES;
BENCHMARK(BM_GlibcMallocFree)->SIZES;
BENCHMARK(BM_MallocBackendAllocFree)->SIZES;
BENCHMARK(BM_EmptyTensor)->Arg(64)->Arg(4096);
BENCHMARK(BM_CachingMixed);

}  // namespace

BENCHMARK_MAIN();
