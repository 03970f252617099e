// The doctor's memory views on scripted allocator states (F5, F6, F11, F13): where the
// reserved bytes go (the parts add up to `reserved` exactly, golden sentences), "outside our
// allocator" from a fake query, per-pool fragmentation through the PyTorch #123548 cycle, the
// largest allocation that would succeed, and the OOM report: its cause (the per-process cap,
// fragmentation, a true shortage) and its top holder's creation line. Private allocators over
// TestRawAllocator give exact numbers; the OOM report itself reads the CPU device allocator.
// Written outside namespace graft: C++ creation sites name the first frame outside graft.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "alloc/alloc_test_util.h"
#include "support/test_util.h"

using namespace graft;
using graft::testing::KiB;
using graft::testing::MiB;
using graft::testing::TestAllocator;

namespace {

constexpr int64_t kMiB = static_cast<int64_t>(MiB);

/// The ledger's parts, summed (what must equal `reserved`).
int64_t parts(const doctor::Ledger& l) {
  int64_t sum = l.rounding + l.cached_releasable + l.free_trapped;
  for (const auto& [k, v] : l.live_by_category) sum += v;
  return sum;
}

/// Installs a fake "outside our allocator" query for the test's lifetime.
class FakeOutside {
 public:
  explicit FakeOutside(std::optional<int64_t> bytes) {
    doctor::set_external_memory_query([this, bytes](Device d) {
      ++calls;
      asked = d;
      return bytes;
    });
  }
  ~FakeOutside() { doctor::set_external_memory_query({}); }  // back to the default (/proc)
  int calls = 0;
  Device asked;
};

const doctor::PoolFragmentation& pool(const doctor::Fragmentation& f, const std::string& name) {
  for (const auto& p : f.pools)
    if (p.pool == name) return p;
  throw std::runtime_error("no pool " + name);
}

struct PoolWant {
  int64_t segments, free_blocks, free_bytes, largest_free;
  double fragmentation;
};
void expect_pool(const doctor::PoolFragmentation& p, const PoolWant& w, const std::string& when) {
  EXPECT_EQ(p.segments, w.segments) << when;
  EXPECT_EQ(p.free_blocks, w.free_blocks) << when;
  EXPECT_EQ(p.free_bytes, w.free_bytes) << when;
  EXPECT_EQ(p.largest_free, w.largest_free) << when;
  EXPECT_DOUBLE_EQ(p.fragmentation, w.fragmentation) << when;
}

/// Sets the CPU device allocator's cap for the test's lifetime, then puts the old one back.
class CpuCap {
 public:
  explicit CpuCap(int64_t bytes) : old_(device_allocator(kCPU).memory_limit()) { set_per_process_memory_limit(bytes); }
  ~CpuCap() { set_per_process_memory_limit(old_ ? std::optional<int64_t>(static_cast<int64_t>(*old_)) : std::nullopt); }

 private:
  std::optional<size_t> old_;
};

/// Captures what the allocator tells an OOM observer (no session installs one meanwhile).
alloc::OomInfo g_oom;
int g_ooms = 0;
std::string capture_oom(const alloc::OomInfo& info) noexcept {
  g_oom = info;
  ++g_ooms;
  return {};
}
class CaptureOoms {
 public:
  CaptureOoms() {
    g_ooms = 0;
    alloc::set_oom_observer(&capture_oom);
  }
  ~CaptureOoms() { alloc::set_oom_observer(nullptr); }
};

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The PyTorch #123548 cycle in the large pool: two big blocks, then a small long-lived one
/// (2 MiB: large enough for the large pool), then the big ones freed.
struct Cycle {
  explicit Cycle(TestAllocator& a) : t(a) {}
  TestAllocator& t;
  std::vector<DataPtr> pinned;
  void once() {
    DataPtr a = t.get(8 * MiB);
    DataPtr b = t.get(8 * MiB);
    pinned.push_back(t.get(2 * MiB));
  }  // a and b are freed here
};

}  // namespace

// ---------------------------------------------------------------- the ledger (F5, F13)

TEST(DoctorLedger, PartsAddUpToReservedAndTheSentencesAreExact) {
  TestAllocator t;
  FakeOutside outside(96 * kMiB);
  DataPtr param = t.get(1000);  // small pool: one 2 MiB segment, 1024-byte block
  alloc::CachingAllocator::set_category(param, MemoryCategory::Parameter);
  DataPtr grad = t.get(3000);  // 3072-byte block
  alloc::CachingAllocator::set_category(grad, MemoryCategory::Gradient);
  DataPtr state = t.get(100);  // 512-byte block
  alloc::CachingAllocator::set_category(state, MemoryCategory::OptimizerState);
  DataPtr big = t.get(5 * MiB);        // a 20 MiB large segment: 5 MiB used, 15 MiB free beside it
  { DataPtr gone = t.get(16 * MiB); }  // no hole fits: a 16 MiB segment, now cached whole
  const doctor::Ledger l = doctor::ledger(*t.a);
  EXPECT_EQ(l.reserved, 38 * kMiB);
  EXPECT_EQ(l.reserved, t.reserved());
  EXPECT_EQ(l.live_by_category,
            (std::map<std::string, int64_t>{
                {"gradient", 3000}, {"optimizer_state", 100}, {"other", 5 * kMiB}, {"parameter", 1000}}));
  EXPECT_EQ(l.rounding, 24 + 72 + 412);
  EXPECT_EQ(l.cached_releasable, 16 * kMiB);
  EXPECT_EQ(l.free_trapped, (2 * kMiB - 1024 - 3072 - 512) + 15 * kMiB);
  EXPECT_EQ(parts(l), l.reserved);
  EXPECT_EQ(l.graph_host_bytes, 0);  // no session: no graph node is counted
  ASSERT_TRUE(l.outside.has_value());
  EXPECT_EQ(*l.outside, 96 * kMiB);
  EXPECT_EQ(outside.calls, 1);
  EXPECT_EQ(outside.asked, kCPU);
  EXPECT_EQ(l.sentences(), (std::vector<std::string>{
                               "38.0 MiB is reserved by graft's allocator on cpu:",
                               "  1000 B holds parameters;",
                               "  2.9 KiB holds gradients (.grad);",
                               "  100 B holds optimizer state;",
                               "  5.0 MiB holds other live tensors (user-held and temporary);",
                               "  508 B is rounding: each request is rounded up to its block size;",
                               "  16.0 MiB is cached and could be returned to the system (empty_cache());",
                               "  17.0 MiB is free but trapped next to live blocks in partly used segments.",
                               "  (the parts add up to 38.0 MiB, all of it.)",
                               "96.0 MiB of cpu memory is used outside graft's allocator.",
                           }));

  // empty_cache() returns the whole free segment; the trapped bytes stay
  t.a->empty_cache();
  const doctor::Ledger after = doctor::ledger(*t.a);
  EXPECT_EQ(after.reserved, 22 * kMiB);
  EXPECT_EQ(after.cached_releasable, 0);
  EXPECT_EQ(after.free_trapped, l.free_trapped);
  EXPECT_EQ(parts(after), after.reserved);

  // every block freed: all of it is cached and releasable
  param = DataPtr();
  grad = DataPtr();
  state = DataPtr();
  big = DataPtr();
  const doctor::Ledger idle = doctor::ledger(*t.a);
  EXPECT_TRUE(idle.live_by_category.empty());
  EXPECT_EQ(idle.rounding, 0);
  EXPECT_EQ(idle.free_trapped, 0);
  EXPECT_EQ(idle.cached_releasable, 22 * kMiB);
  EXPECT_EQ(parts(idle), idle.reserved);
  EXPECT_EQ(idle.sentences(), (std::vector<std::string>{
                                  "22.0 MiB is reserved by graft's allocator on cpu:",
                                  "  22.0 MiB is cached and could be returned to the system (empty_cache());",
                                  "  (the parts add up to 22.0 MiB, all of it.)",
                                  "96.0 MiB of cpu memory is used outside graft's allocator.",
                              }));
}

TEST(DoctorLedger, UnknownOutsideMemoryIsNotGuessed) {
  TestAllocator t;
  FakeOutside unknown(std::nullopt);
  DataPtr p = t.get(512);
  const doctor::Ledger l = doctor::ledger(*t.a);
  EXPECT_FALSE(l.outside.has_value());
  EXPECT_EQ(l.sentences(), (std::vector<std::string>{
                               "2.0 MiB is reserved by graft's allocator on cpu:",
                               "  512 B holds other live tensors (user-held and temporary);",
                               "  2.0 MiB is free but trapped next to live blocks in partly used segments.",
                               "  (the parts add up to 2.0 MiB, all of it.)",
                           }));
}

TEST(DoctorLedger, PartsAddUpAfterEveryStepOfAScriptedSequence) {
  TestAllocator t;
  FakeOutside outside(0);
  std::vector<DataPtr> live;
  // sizes across both pools, odd sizes for rounding; free every third block as we go
  const size_t sizes[] = {1,           511,     513,      4097,         100 * KiB, 1 * MiB, 1 * MiB + 1,
                          3 * MiB + 7, 9 * MiB, 10 * MiB, 11 * MiB + 3, 700 * KiB, 64,      25 * MiB};
  int step = 0;
  for (size_t n : sizes) {
    live.push_back(t.get(n));
    if (++step % 3 == 0) live.erase(live.begin() + static_cast<long>(live.size() / 2));
    const doctor::Ledger l = doctor::ledger(*t.a);
    EXPECT_EQ(l.reserved, t.reserved()) << "after " << n;
    EXPECT_EQ(parts(l), l.reserved) << "after " << n;
    int64_t live_requested = 0;
    for (const auto& [k, v] : l.live_by_category) live_requested += v;
    EXPECT_EQ(live_requested + l.rounding, t.allocated()) << "after " << n;
    EXPECT_NE(l.sentences()[l.sentences().size() - 2].find(", all of it.)"), std::string::npos) << "after " << n;
  }
  live.clear();
  const doctor::Ledger l = doctor::ledger(*t.a);
  EXPECT_EQ(l.cached_releasable, l.reserved);
  t.a->empty_cache();
  EXPECT_EQ(doctor::ledger(*t.a).reserved, 0);
}

TEST(DoctorLedger, RunningTotalIsDeviceFlatAndHostGrowing) {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 1)};
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({4, 8}), y = randn({4, 1});
  FakeOutside outside(0);
  doctor::Session dr;
  Tensor total = zeros({});
  for (int i = 0; i < 8; ++i) {
    opt.zero_grad();
    Tensor loss = mse_loss(net->forward(x), y);
    loss.backward();
    total = total + loss;  // LD001: the graphs stay, their saved tensors were freed
    opt.step();
  }
  const std::vector<doctor::StepRecord> t = dr.timeline();
  ASSERT_EQ(t.size(), 8u);
  for (size_t k = 1; k < t.size(); ++k) {
    EXPECT_EQ(t[k].bytes_by_category, t[0].bytes_by_category) << "step " << t[k].step;  // the device: flat
    EXPECT_EQ(t[k].saved_bytes, 0) << "step " << t[k].step;
    EXPECT_GT(t[k].graph_host_bytes, t[k - 1].graph_host_bytes) << "step " << t[k].step;  // the host grows
    EXPECT_EQ(t[k].graph_nodes, t[k - 1].graph_nodes + 9) << "step " << t[k].step;        // as PyTorch's graph
  }
  const doctor::Ledger l = doctor::ledger(kCPU);
  EXPECT_EQ(l.graph_host_bytes, t.back().graph_host_bytes);
  EXPECT_EQ(parts(l), l.reserved);
  const std::vector<std::string> s = l.sentences();
  const std::string host = " of host memory holds backward-graph nodes (outside the allocator).";
  ASSERT_GE(s.size(), 2u);
  const std::string& nodes_line = s[s.size() - 2];
  EXPECT_EQ(nodes_line.size() > host.size() ? nodes_line.substr(nodes_line.size() - host.size()) : "", host)
      << ::testing::PrintToString(s);
  EXPECT_EQ(s.back(), "0 B of cpu memory is used outside graft's allocator.");
}

// ---------------------------------------------------------------- fragmentation (F6)

TEST(DoctorFragmentation, PyTorch123548CycleGivesExactValuesPerPool) {
  TestAllocator t;
  Cycle c{t};
  const PoolWant empty{0, 0, 0, 0, 0.0};

  c.once();  // A [0,8) B [8,16) C1 [16,18) of a 20 MiB segment; A+B merge when freed
  auto f = doctor::fragmentation(*t.a);
  expect_pool(pool(f, "large"), {1, 2, 18 * kMiB, 16 * kMiB, 1.0 - 16.0 / 18.0}, "cycle 1");
  expect_pool(pool(f, "small"), empty, "cycle 1");

  c.once();  // A, B reuse the 16 MiB hole; C2 fills the 2 MiB hole exactly
  f = doctor::fragmentation(*t.a);
  expect_pool(pool(f, "large"), {1, 1, 16 * kMiB, 16 * kMiB, 0.0}, "cycle 2");

  c.once();  // no hole fits C3: a second segment, 18 MiB free behind C3
  f = doctor::fragmentation(*t.a);
  expect_pool(pool(f, "large"), {2, 2, 34 * kMiB, 18 * kMiB, 1.0 - 18.0 / 34.0}, "cycle 3");

  c.once();  // C4 splits the 18 MiB hole: two 16 MiB holes, each pinned
  f = doctor::fragmentation(*t.a);
  expect_pool(pool(f, "large"), {2, 2, 32 * kMiB, 16 * kMiB, 0.5}, "cycle 4");
  expect_pool(pool(f, "small"), empty, "cycle 4");

  // the device has nothing more to give: only the holes can serve a request
  t.raw->set_cap(static_cast<size_t>(t.reserved()));
  f = doctor::fragmentation(*t.a);
  EXPECT_EQ(f.largest_allocation, 16 * kMiB);
  EXPECT_EQ(f.sentences(), (std::vector<std::string>{
                               "The large pool has 2 segments with 32.0 MiB free in 2 blocks; the largest is 16.0 MiB, "
                               "so fragmentation is 50.0% (1 - largest free / total free).",
                               "The largest single allocation that would succeed now is 16.0 MiB.",
                           }));
  // the ledger agrees: 8 MiB pinned by the four small blocks, 32 MiB trapped around them
  FakeOutside outside(std::nullopt);
  const doctor::Ledger l = doctor::ledger(*t.a);
  EXPECT_EQ(l.sentences(), (std::vector<std::string>{
                               "40.0 MiB is reserved by graft's allocator on cpu:",
                               "  8.0 MiB holds other live tensors (user-held and temporary);",
                               "  32.0 MiB is free but trapped next to live blocks in partly used segments.",
                               "  (the parts add up to 40.0 MiB, all of it.)",
                           }));
}

// ---------------------------------------------------------------- largest_allocation (F6)

TEST(DoctorFragmentation, LargestAllocationUnderACapSucceedsAndTwoMiBMoreDoesNot) {
  TestAllocator t;
  t.raw->set_cap(1024 * MiB);  // the device's free memory is exact (not the host's)
  t.a->set_memory_limit(31 * MiB);
  DataPtr small = t.get(1000);  // a 2 MiB small segment
  const int64_t largest = doctor::fragmentation(*t.a).largest_allocation;
  EXPECT_EQ(largest, 28 * kMiB);  // 29 MiB of room under the cap, segments above 10 MiB in 2 MiB steps
  EXPECT_EQ(static_cast<int64_t>(t.a->largest_allocation()), largest);
  EXPECT_THROW(t.get(static_cast<size_t>(largest) + 2 * MiB), OutOfMemoryError);
  EXPECT_THROW(t.get(static_cast<size_t>(largest) + 512), OutOfMemoryError);  // rounds to a 30 MiB segment
  DataPtr fits = t.get(static_cast<size_t>(largest));
  EXPECT_EQ(t.reserved(), 30 * kMiB);
  // now only the small segment's hole is left, and a small request takes at most 1 MiB
  EXPECT_EQ(doctor::fragmentation(*t.a).largest_allocation, static_cast<int64_t>(1 * MiB));
  DataPtr hole = t.get(1 * MiB);
  EXPECT_THROW(t.get(1 * MiB + 512), OutOfMemoryError);
}

TEST(DoctorFragmentation, LargestAllocationWithoutACapComesFromTheHolesAndTheReleasableCache) {
  TestAllocator t;
  Cycle c{t};
  for (int i = 0; i < 3; ++i) c.once();  // holes of 16 and 18 MiB
  {
    DataPtr a = t.get(19 * MiB);  // no hole fits: two 20 MiB segments, cached whole once freed
    DataPtr b = t.get(19 * MiB);
  }
  EXPECT_EQ(t.reserved(), 80 * kMiB);
  t.raw->set_cap(static_cast<size_t>(t.reserved()));  // no cap, and the device is full
  // releasing the two cached segments makes room for one new segment of 40 MiB
  const int64_t largest = doctor::fragmentation(*t.a).largest_allocation;
  EXPECT_EQ(largest, 40 * kMiB);
  EXPECT_THROW(t.get(static_cast<size_t>(largest) + 2 * MiB), OutOfMemoryError);
  DataPtr fits = t.get(static_cast<size_t>(largest));
  EXPECT_EQ(t.reserved(), 80 * kMiB);  // 40 MiB of cache released, a 40 MiB segment made
  // only the holes are left
  EXPECT_EQ(doctor::fragmentation(*t.a).largest_allocation, 18 * kMiB);
  EXPECT_THROW(t.get(20 * MiB), OutOfMemoryError);
  DataPtr hole = t.get(18 * MiB);
  EXPECT_EQ(doctor::fragmentation(*t.a).largest_allocation, 16 * kMiB);
}

// ---------------------------------------------------------------- OOM reports (F6, F11)

TEST(DoctorOom, CapOomCarriesTheReportNamingTheCapAndTheTopHolder) {
  const std::string path = ::testing::TempDir() + "graft_doctor_oom_report.txt";
  std::remove(path.c_str());
  doctor::Options options;
  options.oom_report_path = path;
  doctor::Session dr(options);
  Tensor holder = zeros({1024, 1024});  // 4 MiB, made here while the session watches
  Tensor small = zeros({16});
  const lifetime::Site site = lifetime::site(doctor::origin(*holder.impl()->storage()).site);
  EXPECT_NE(site.function.find("DoctorOom_CapOomCarriesTheReportNamingTheCapAndTheTopHolder_Test::TestBody"),
            std::string::npos)
      << site.function;
  std::string message;
  {
    CpuCap cap(memory_reserved() + kMiB);
    try {
      Tensor too_big = empty({16, 1024, 1024});  // 64 MiB (the host has that much free)
      ADD_FAILURE() << "expected OutOfMemoryError";
    } catch (const OutOfMemoryError& e) {
      message = e.what();
    }
  }
  // the allocator's own message first, then the doctor's report
  EXPECT_EQ(message.rfind("CPU out of memory. Tried to allocate 64.00 MiB.", 0), 0u) << message;
  EXPECT_NE(message.find("\n\ngraft.doctor wrote its report to " + path + "\n"), std::string::npos) << message;
  const std::string report = read_file(path);
  ASSERT_FALSE(report.empty()) << path;
  EXPECT_EQ(report, dr.last_oom_report());
  EXPECT_NE(message.find(report), std::string::npos);
  EXPECT_EQ(report.rfind("Out of memory on cpu: a request of 64.0 MiB needed a new segment of 64.0 MiB.\n"
                         "Cause: the per-process cap. ",
                         0),
            0u)
      << report;
  EXPECT_NE(report.find("Top holders by creation line:\n  4.0 MiB in 1 other storage made at " + site.where() + "\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(" is reserved by graft's allocator on cpu:\n"), std::string::npos) << report;
  EXPECT_NE(report.find("The largest single allocation that would succeed now is "), std::string::npos) << report;
  std::remove(path.c_str());
}

TEST(DoctorOom, WithoutAReportPathTheReportIsInTheMessageOnly) {
  doctor::Session dr;
  Tensor holder = zeros({512, 1024});  // 2 MiB
  std::string message;
  {
    CpuCap cap(memory_reserved() + kMiB);
    try {
      Tensor too_big = empty({8, 1024, 1024});
      ADD_FAILURE() << "expected OutOfMemoryError";
    } catch (const OutOfMemoryError& e) {
      message = e.what();
    }
  }
  EXPECT_NE(message.find("\n\ngraft.doctor:\nOut of memory on cpu: a request of 32.0 MiB"), std::string::npos)
      << message;
  EXPECT_NE(message.find("2.0 MiB in 1 other storage made at " +
                         lifetime::site(doctor::origin(*holder.impl()->storage()).site).where()),
            std::string::npos)
      << message;
  dr.stop();
  // no session: the allocator's message alone
  CpuCap cap(memory_reserved() + kMiB);
  try {
    Tensor too_big = empty({8, 1024, 1024});
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).find("graft.doctor"), std::string::npos) << e.what();
  }
}

TEST(DoctorOom, FragmentationAndTrueShortageAreToldApart) {
  CaptureOoms capture;
  {
    // fragmentation: 32 MiB free in holes of 16 MiB, the device full, 18 MiB asked
    TestAllocator t;
    Cycle c{t};
    for (int i = 0; i < 4; ++i) c.once();
    t.raw->set_cap(static_cast<size_t>(t.reserved()));
    EXPECT_THROW(t.get(18 * MiB), OutOfMemoryError);
    ASSERT_EQ(g_ooms, 1);
    EXPECT_EQ(g_oom.requested, 18 * MiB);
    EXPECT_EQ(g_oom.alloc_size, 18 * MiB);
    EXPECT_EQ(g_oom.allocated, 8 * kMiB);
    EXPECT_EQ(g_oom.reserved, 40 * kMiB);
    EXPECT_FALSE(g_oom.limit.has_value());
    const std::string report = doctor::oom_report(g_oom);
    EXPECT_EQ(report.rfind("Out of memory on cpu: a request of 18.0 MiB needed a new segment of 18.0 MiB.\n"
                           "Cause: fragmentation. 32.0 MiB is free inside the allocator's segments, but no free "
                           "block is large enough",
                           0),
              0u)
        << report;
  }
  {
    // a true shortage: 1 MiB free in the only segment, 3 MiB asked, the device has 2 MiB
    TestAllocator t;
    t.raw->set_cap(4 * MiB);
    DataPtr a = t.get(1 * MiB);
    EXPECT_THROW(t.get(3 * MiB), OutOfMemoryError);
    ASSERT_EQ(g_ooms, 2);
    const std::string report = doctor::oom_report(g_oom);
    EXPECT_EQ(report.rfind("Out of memory on cpu: a request of 3.0 MiB needed a new segment of 20.0 MiB.\n"
                           "Cause: a true shortage. 1.0 MiB is live in tensors and the device has 2.0 MiB free.\n",
                           0),
              0u)
        << report;
  }
  {
    // a cap on a private allocator is the cap, whatever the holes
    TestAllocator t;
    t.raw->set_cap(1024 * MiB);
    t.a->set_memory_limit(3 * MiB);
    DataPtr a = t.get(100);
    EXPECT_THROW(t.get(2 * MiB), OutOfMemoryError);
    ASSERT_EQ(g_ooms, 3);
    const std::string report = doctor::oom_report(g_oom);
    EXPECT_EQ(report.rfind("Out of memory on cpu: a request of 2.0 MiB needed a new segment of 20.0 MiB.\n"
                           "Cause: the per-process cap. 3.0 MiB is allowed, 2.0 MiB is reserved, so a new segment of "
                           "20.0 MiB would pass the cap (set_per_process_memory_fraction).\n",
                           0),
              0u)
        << report;
  }
}
