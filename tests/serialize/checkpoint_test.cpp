// Checkpoints of modules and optimizers: round trips, resuming training bit for bit, and bad
// files or mismatched models leaving everything as it was.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/test_util.h"

using namespace graft;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("graft_ckpt_" + std::to_string(::getpid()) + "_" + name)).string();
}

struct TinyImpl : nn::Module {
  TinyImpl() : Module("Tiny") {
    l1 = register_module("l1", nn::Linear(3, 4));
    bn = register_module("bn", nn::BatchNorm1d(4));
    l2 = register_module("l2", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return l2->forward(relu(bn->forward(l1->forward(x)))); }
  nn::Linear l1{nullptr}, l2{nullptr};
  nn::BatchNorm1d bn{nullptr};
};
GRAFT_MODULE(Tiny);

void train_steps(Tiny& m, optim::Optimizer& opt, int first, int n) {
  for (int i = first; i < first + n; ++i) {
    manual_seed(100 + static_cast<uint64_t>(i));  // the same batch for step i in every run
    Tensor x = randn({8, 3}), y = randn({8, 2});
    opt.zero_grad();
    mse_loss(m->forward(x), y).backward();
    opt.step();
  }
}

bool same_state(const StateDict& a, const StateDict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& it : a)
    if (!equal(it.value(), b[it.key()])) return false;
  return true;
}

}  // namespace

TEST(Checkpoint, ModuleRoundTrip) {
  const std::string path = temp_path("module.safetensors");
  manual_seed(1);
  Tiny a, b;
  train_steps(a, *std::make_unique<optim::SGD>(a->parameters(), optim::SGDOptions(0.1)), 0, 2);
  save(*a, path, {{"note", "tiny"}});
  Metadata meta = load(*b, path);
  EXPECT_EQ(meta.at("note"), "tiny");
  EXPECT_TRUE(same_state(a->state_dict(), b->state_dict()));
  EXPECT_EQ(b->bn->num_batches_tracked.item<int64_t>(), 2);
  std::remove(path.c_str());
}

TEST(Checkpoint, ResumingContinuesBitForBit) {
  const std::string path = temp_path("resume.safetensors");
  // Uninterrupted: 6 steps.
  manual_seed(7);
  Tiny ref;
  optim::Adam ref_opt(ref->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
  train_steps(ref, ref_opt, 0, 6);
  // Interrupted after 3 steps, saved, resumed in fresh objects.
  manual_seed(7);
  {
    Tiny m;
    optim::Adam opt(m->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
    train_steps(m, opt, 0, 3);
    save_checkpoint(*m, opt, path, {{"step", "3"}});
  }
  manual_seed(999);  // different init: everything must come from the file
  Tiny m2;
  optim::Adam opt2(m2->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
  EXPECT_EQ(load_checkpoint(*m2, opt2, path).at("step"), "3");
  train_steps(m2, opt2, 3, 3);
  EXPECT_TRUE(same_state(ref->state_dict(), m2->state_dict()));
  EXPECT_TRUE(same_state(ref_opt.state_dict(), opt2.state_dict()));
  std::remove(path.c_str());
}

TEST(Checkpoint, CorruptOrTruncatedFilesChangeNothing) {
  const std::string path = temp_path("bad.safetensors");
  manual_seed(3);
  Tiny m;
  optim::SGD opt(m->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  train_steps(m, opt, 0, 1);
  save_checkpoint(*m, opt, path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const StateDict before_model = [&] {
    StateDict s;
    for (auto& it : m->state_dict()) s.insert(it.key(), it.value().clone());
    return s;
  }();
  for (size_t cut : {size_t{4}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
    EXPECT_THROW(load_checkpoint(*m, opt, path), ValueError) << "cut at " << cut;
    EXPECT_TRUE(same_state(m->state_dict(), before_model));
  }
  std::remove(path.c_str());
}

TEST(Checkpoint, RejectedOptimizerPartPutsTheModelBack) {
  const std::string path = temp_path("mismatch.safetensors");
  manual_seed(4);
  Tiny src;
  optim::SGD src_opt(src->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  train_steps(src, src_opt, 0, 2);
  save_checkpoint(*src, src_opt, path);
  // Same model, but an optimizer with two param groups: the model part loads, the
  // optimizer part is rejected, and the model must be back as it was.
  Tiny dst;
  auto params = dst->parameters();
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>(params.begin(), params.begin() + 2));
  groups.emplace_back(std::vector<Tensor>(params.begin() + 2, params.end()));
  optim::SGD dst_opt(groups, optim::SGDOptions(0.1).momentum(0.9));
  StateDict before;
  for (auto& it : dst->state_dict()) before.insert(it.key(), it.value().clone());
  EXPECT_THROW_HAS(load_checkpoint(*dst, dst_opt, path), ValueError, "parameter groups");
  EXPECT_TRUE(same_state(dst->state_dict(), before));
  std::remove(path.c_str());
}

TEST(Checkpoint, FileWithoutThePrefixesIsRefused) {
  const std::string path = temp_path("plain.safetensors");
  Tiny m;
  save(*m, path);  // a module file, not a model + optimizer file
  optim::SGD opt(m->parameters(), optim::SGDOptions(0.1));
  EXPECT_THROW_HAS(load_checkpoint(*m, opt, path), ValueError, "not a save_checkpoint file");
  std::remove(path.c_str());
}
