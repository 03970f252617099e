// The owns-PyObject bit of TensorImpl's count word (docs/notes/python.md, "Tensor identity"),
// driven by a fake Python layer: a recursive mutex stands for the GIL, a struct with an int
// count for the Python object, whose "handle" is a Tensor like pybind11's holder.
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "support/test_util.h"

using namespace graft;

namespace {

std::recursive_mutex g_gil;  // the fake GIL (the real one is reentrant too)

/// A fake Python object of a tensor: `refcnt` Python references (guarded by g_gil) and the
/// handle that owns one reference to the tensor.
struct FakePyObject {
  int refcnt = 1;
  Tensor handle;
  bool alive = true;
  int resurrections = 0;
  int releases = 0;  // the tensor gave its reference back
};

/// The deallocator: resurrect when C++ still holds the tensor, else die (drop the handle).
void fake_dealloc(FakePyObject* o) {
  if (o->handle.impl()->try_own_pyobject(o)) {
    o->refcnt = 1;  // the tensor's reference
    ++o->resurrections;
    return;
  }
  o->alive = false;
  o->handle = Tensor();
}

/// Py_DECREF, with the fake GIL held.
void fake_decref(FakePyObject* o) {
  ASSERT_GT(o->refcnt, 0);
  if (--o->refcnt == 0) fake_dealloc(o);
}

/// The release hook, as the Python layer's: take the GIL, then drop the reference.
void fake_release_hook(TensorImpl* t) {
  std::lock_guard<std::recursive_mutex> gil(g_gil);
  if (auto* o = static_cast<FakePyObject*>(t->release_ref_and_take_pyobject())) {
    ++o->releases;
    fake_decref(o);
  }
}

/// Installs the fake hook for one test.
struct FakePythonLayer {
  FakePythonLayer() { TensorImpl::set_pyobject_release_hook(&fake_release_hook); }
  ~FakePythonLayer() { TensorImpl::set_pyobject_release_hook(nullptr); }
};

}  // namespace

TEST(PyObjectBit, UseCountIgnoresTheBit) {
  FakePythonLayer layer;
  FakePyObject o;
  o.handle = zeros({3});
  Tensor cpp = o.handle;  // a C++ owner besides the handle
  {
    std::lock_guard<std::recursive_mutex> gil(g_gil);
    fake_decref(&o);  // Python drops its last reference: resurrected, owned by the tensor
  }
  EXPECT_TRUE(o.alive);
  EXPECT_EQ(o.resurrections, 1);
  EXPECT_EQ(o.handle.impl()->owned_pyobject, &o);
  EXPECT_EQ(cpp.use_count(), 2u);  // handle + cpp, without the bit
  Tensor more = cpp;
  EXPECT_EQ(cpp.use_count(), 3u);
  more = Tensor();  // 3 -> 2: no release
  EXPECT_EQ(o.releases, 0);
  EXPECT_EQ(o.handle.impl()->owned_pyobject, &o);
  cpp = Tensor();  // 2 -> 1: the tensor gives the object back, and the object dies
  EXPECT_EQ(o.releases, 1);
  EXPECT_FALSE(o.alive);
  EXPECT_FALSE(o.handle.defined());
}

TEST(PyObjectBit, NoOwnershipWithoutOtherOwnersOrTwice) {
  FakePythonLayer layer;
  FakePyObject o;
  o.handle = zeros({2});
  int other = 0;
  EXPECT_FALSE(o.handle.impl()->try_own_pyobject(&other));  // count 1: only the handle
  Tensor cpp = o.handle;
  {
    std::lock_guard<std::recursive_mutex> gil(g_gil);
    fake_decref(&o);
  }
  EXPECT_FALSE(o.handle.impl()->try_own_pyobject(&other));  // owns one already
  EXPECT_EQ(o.handle.impl()->owned_pyobject, &o);
  cpp = Tensor();
  EXPECT_FALSE(o.alive);
}

TEST(PyObjectBit, RevivedObjectOutlivesTheGraph) {
  FakePythonLayer layer;
  FakePyObject o;
  o.handle = ones({4});
  Tensor saved = o.handle;
  {
    std::lock_guard<std::recursive_mutex> gil(g_gil);
    fake_decref(&o);  // owned by the tensor now
    ++o.refcnt;       // Python gets it back (a weak reference, the instance registry)
  }
  saved = Tensor();  // the tensor gives its reference back; Python's keeps the object
  EXPECT_EQ(o.releases, 1);
  EXPECT_TRUE(o.alive);
  EXPECT_EQ(o.refcnt, 1);
  EXPECT_EQ(o.handle.use_count(), 1u);
  std::lock_guard<std::recursive_mutex> gil(g_gil);
  fake_decref(&o);  // the last Python reference: dies, no resurrection
  EXPECT_FALSE(o.alive);
  EXPECT_EQ(o.resurrections, 1);
}

// StorageImpl and Node never watch the bit: their count is the whole word, dropped with one
// fetch_sub.
static_assert(intrusive_watches_pyobject_bit<TensorImpl>::value);
static_assert(!intrusive_watches_pyobject_bit<StorageImpl>::value);
static_assert(!intrusive_watches_pyobject_bit<Node>::value);

// C++ owners copy and drop the tensor on several threads without the GIL while "Python" keeps
// reviving and dropping the object under it: the object must be given back exactly once per
// ownership, die exactly once, after the last C++ owner, and the memory must come back (the
// suite's leak check).
TEST(PyObjectBit, StressDropsWithoutTheGilAgainstRevivals) {
  FakePythonLayer layer;
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  int total_resurrections = 0;
  for (int round = 0; round < kRounds; ++round) {
    FakePyObject o;
    o.handle = zeros({16});
    std::vector<Tensor> copies(kThreads, o.handle);
    std::atomic<int> running{kThreads};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        Tensor mine = std::move(copies[i]);
        while (!go.load()) std::this_thread::yield();
        for (int k = 0; k < 2000; ++k) {
          Tensor extra = mine;  // copies and drops: 3 -> 2 -> ... while the bit may be set
          if ((k + i) % 7 == 0) std::this_thread::yield();
        }
        mine = Tensor();  // the last of these may hand the object back
        --running;
      });
    // "Python": drop its reference (resurrection), revive it, drop again, while threads run
    int python_refs = 0;
    {
      std::lock_guard<std::recursive_mutex> gil(g_gil);
      fake_decref(&o);  // the C++ copies hold the tensor: resurrected
    }
    go = true;
    while (running.load() > 0 || python_refs > 0) {
      std::lock_guard<std::recursive_mutex> gil(g_gil);
      if (!o.alive) break;
      if (python_refs > 0) {
        --python_refs;
        fake_decref(&o);
      } else if (running.load() > 0) {
        ++python_refs;  // weakref() while it is alive
        ++o.refcnt;
      }
    }
    for (auto& th : threads) th.join();
    std::lock_guard<std::recursive_mutex> gil(g_gil);
    EXPECT_FALSE(o.alive) << "round " << round;
    EXPECT_FALSE(o.handle.defined());
    EXPECT_EQ(o.refcnt, 0);
    EXPECT_EQ(o.releases, o.resurrections) << "round " << round;  // every ownership was given back once
    total_resurrections += o.resurrections;
  }
  EXPECT_GE(total_resurrections, kRounds);  // the bit was set (and cleared) at least once a round
}
