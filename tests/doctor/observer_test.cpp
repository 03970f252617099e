// The observer interface (include/graft/core/lifetime.h): every graph node, tensor, storage and
// saved slot reports its creation and destruction to whatever observer is installed, not only to
// the leak doctor; what the doctor knows of an object lives in its own side tables, which an
// ended session keeps for the objects it saw until they die, and then the doctor's recorder
// uninstalls itself.
#include <set>

#include "support/test_util.h"

using namespace graft;

namespace {

/// Keeps the live set of every kind of object it is told about, and forwards the object events
/// to the observer it replaced (a doctor's recorder may still be tracking objects of an ended
/// session: it must see them die).
class LiveSets final : public lifetime::Observer {
 public:
  LiveSets() : previous_(lifetime::observer()) { lifetime::set_observer(this); }
  ~LiveSets() override { lifetime::set_observer(previous_); }

  std::set<const void*> nodes, tensors, storages, saved;
  size_t max_nodes = 0, max_tensors = 0, max_storages = 0, max_saved = 0, reused = 0;

  void node_created(const Node& n) noexcept override {
    nodes.insert(&n);
    max_nodes = std::max(max_nodes, nodes.size());
  }
  void node_destroyed(const Node& n) noexcept override {
    nodes.erase(&n);
    if (previous_) previous_->node_destroyed(n);
  }
  void node_reused(const Node&) noexcept override { ++reused; }
  void tensor_created(const TensorImpl& t) noexcept override {
    tensors.insert(&t);
    max_tensors = std::max(max_tensors, tensors.size());
  }
  void tensor_destroyed(const TensorImpl& t) noexcept override {
    tensors.erase(&t);
    if (previous_) previous_->tensor_destroyed(t);
  }
  void storage_created(const StorageImpl& st) noexcept override {
    storages.insert(&st);
    max_storages = std::max(max_storages, storages.size());
  }
  void storage_destroyed(const StorageImpl& st) noexcept override {
    storages.erase(&st);
    if (previous_) previous_->storage_destroyed(st);
  }
  void saved_created(const SavedVariable& sv, int64_t) noexcept override {
    saved.insert(&sv);
    max_saved = std::max(max_saved, saved.size());
  }
  void saved_copied(const SavedVariable& from, const SavedVariable& to, bool moved) noexcept override {
    if (!saved.count(&from)) return;
    if (moved) saved.erase(&from);
    saved.insert(&to);
    if (previous_) previous_->saved_copied(from, to, moved);
  }
  void saved_destroyed(const SavedVariable& sv) noexcept override {
    saved.erase(&sv);
    if (previous_) previous_->saved_destroyed(sv);
  }

 private:
  lifetime::Observer* previous_;
};

}  // namespace

TEST(Observer, SeesEveryObjectOfAStepMadeAndDestroyed) {
  nn::Linear lin(8, 4);
  Tensor x = randn({16, 8});
  LiveSets live;
  {
    Tensor loss = relu(lin->forward(x)).pow(2).mean();
    loss.backward();                             // saved slots are released as the nodes run
    Tensor again = relu(lin->forward(x)).sum();  // reuses the weight's live accumulator
    EXPECT_GT(live.nodes.size(), 0u);
    EXPECT_GT(live.saved.size(), 0u);
  }
  // everything the step made is gone, and was seen
  EXPECT_TRUE(live.nodes.empty()) << live.nodes.size();
  EXPECT_TRUE(live.saved.empty()) << live.saved.size();
  EXPECT_GE(live.max_nodes, 5u);
  EXPECT_GE(live.max_saved, 3u);
  EXPECT_GT(live.max_tensors, 0u);
  EXPECT_GT(live.max_storages, 0u);
  EXPECT_GE(live.reused, 1u);
  // what is still alive was made before: the gradients the step left in .grad
  for (const Tensor& p : lin->parameters()) {
    live.tensors.erase(p.grad().impl());
    live.storages.erase(p.grad().impl()->storage().get());
  }
  EXPECT_TRUE(live.tensors.empty()) << live.tensors.size();
  EXPECT_TRUE(live.storages.empty()) << live.storages.size();
}

TEST(Observer, AnEndedSessionKeepsWhatItSawUntilItDiesThenUninstalls) {
  ASSERT_EQ(lifetime::observer(), nullptr) << "an earlier test left alive objects a session saw";
  nn::Linear lin(8, 4);
  Tensor x = randn({16, 8});
  Tensor kept;
  {
    doctor::Session dr;
    kept = lin->forward(x).sum();
    const doctor::Origin o = doctor::origin(*kept.grad_fn());
    EXPECT_GT(o.generation, 0u);
    dr.stop();
    // the report after stop() still finds the graph the session saw
    EXPECT_EQ(dr.live_graphs().nodes(), 6);  // Sum, Add, Mm, T and the two accumulators
    EXPECT_NE(lifetime::observer(), nullptr);
    Tensor later = lin->forward(x);  // made after stop(): not recorded
    EXPECT_EQ(doctor::origin(*later.grad_fn()).generation, 0u);
    EXPECT_EQ(dr.live_graphs().nodes(), 6);
  }
  kept = Tensor();
  EXPECT_EQ(lifetime::observer(), nullptr);  // nothing the session saw is alive any more
}
