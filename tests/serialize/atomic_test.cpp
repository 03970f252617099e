// Atomic saves: a failure at any write, at fsync or at rename (or an exception out of the
// writer) leaves the previous checkpoint byte-identical and no temporary file behind.
#include <sys/stat.h>

#include <stdexcept>

#include "st_test_util.h"

namespace graft::testing {
namespace {

using safetensors::detail::SaveFault;
using safetensors::detail::set_save_fault_for_testing;

// Disarms any fault a test armed, even when an expectation failed first.
struct FaultGuard {
  ~FaultGuard() { set_save_fault_for_testing(SaveFault::None); }
};

StateDict previous_checkpoint() {
  StateDict sd;
  sd.insert("w", arange(12, kFloat32).reshape({3, 4}));
  return sd;
}

StateDict next_checkpoint() {
  StateDict sd;
  sd.insert("w", arange(12, kFloat64).reshape({3, 4}).t());  // non-contiguous: copied while saving
  sd.insert("b", ones({4}));
  sd.insert("mask", tensor({1, 0}, kBool));
  return sd;
}

// Runs `save` with `fault` armed and checks the aftermath.
void expect_failed_save_leaves_previous(const ScratchDir& dir, const std::string& path, const std::string& before,
                                        SaveFault fault, int nth) {
  FaultGuard guard;
  StateDict next = next_checkpoint();
  set_save_fault_for_testing(fault, nth);
  bool threw = false;
  try {
    save(next, path);
  } catch (const RuntimeError& e) {
    threw = true;
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("save: cannot write '" + path + "': ", 0), 0u) << msg;
    EXPECT_NE(msg.find("Input/output error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/.ckpt.safetensors.tmp-"), std::string::npos) << msg;  // names the temporary file
  } catch (const std::runtime_error& e) {
    threw = true;
    EXPECT_EQ(fault, SaveFault::WriteThrows);
    EXPECT_EQ(std::string(e.what()), "injected exception in write");
  }
  EXPECT_TRUE(threw) << "fault " << static_cast<int>(fault) << " at " << nth << " did not fail the save";
  EXPECT_EQ(read_all(path), before) << "fault " << static_cast<int>(fault) << " at " << nth;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"ckpt.safetensors", "keep.txt"}))
      << "fault " << static_cast<int>(fault) << " at " << nth;
}

TEST(AtomicSave, AFailedWriteAtAnyPointLeavesThePreviousFileIntact) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  write_all(dir.file("keep.txt"), "unrelated");
  save(previous_checkpoint(), path);
  const std::string before = read_all(path);

  // How many writes a save of the next checkpoint makes (header, then one per non-empty tensor).
  save(next_checkpoint(), dir.file("probe"));
  const int writes = safetensors::detail::last_save_write_count_for_testing();
  ASSERT_EQ(writes, 4);
  const std::string after = read_all(dir.file("probe"));
  std::filesystem::remove(dir.file("probe"));

  for (int nth = 1; nth <= writes; ++nth) {
    expect_failed_save_leaves_previous(dir, path, before, SaveFault::WriteError, nth);
    expect_failed_save_leaves_previous(dir, path, before, SaveFault::WriteThrows, nth);
  }
  expect_failed_save_leaves_previous(dir, path, before, SaveFault::FsyncError, 1);
  expect_failed_save_leaves_previous(dir, path, before, SaveFault::RenameError, 1);

  // Faults fire once: the next save goes through and replaces the file.
  save(next_checkpoint(), path);
  EXPECT_EQ(read_all(path), after);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"ckpt.safetensors", "keep.txt"}));
}

TEST(AtomicSave, AFailedFirstSaveCreatesNothing) {
  ScratchDir dir;
  FaultGuard guard;
  set_save_fault_for_testing(SaveFault::WriteError, 2);
  EXPECT_THROW_HAS(save(next_checkpoint(), dir.file("new.safetensors")), RuntimeError, "Input/output error");
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicSave, AFaultArmedForALaterWriteDoesNotFireEarly) {
  ScratchDir dir;
  FaultGuard guard;
  set_save_fault_for_testing(SaveFault::WriteError, 5);  // the save makes only 4 writes
  StateDict next = next_checkpoint();
  save(next, dir.file("ok.safetensors"));
  expect_same_state(next, load(dir.file("ok.safetensors")));
}

TEST(AtomicSave, MissingDirectoryIsARuntimeError) {
  ScratchDir dir;
  const std::string path = dir.file("nope/x.safetensors");
  EXPECT_THROW_HAS(
      save(previous_checkpoint(), path), RuntimeError,
      "save: cannot write '" + path + "': cannot create temporary file '" + dir.file("nope/.x.safetensors.tmp-"));
  EXPECT_THROW_HAS(save(previous_checkpoint(), path), RuntimeError, "No such file or directory");
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicSave, ADirectoryInTheWayIsNotReplaced) {
  ScratchDir dir;
  const std::string path = dir.file("taken");
  std::filesystem::create_directory(path);
  EXPECT_THROW_HAS(save(previous_checkpoint(), path), RuntimeError, "renaming '");
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

TEST(AtomicSave, ASymlinkIsFollowedAndKept) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.path() / "real");
  const std::string target = dir.file("real/model.safetensors");
  const std::string link = dir.file("latest.safetensors");
  save(previous_checkpoint(), target);
  std::filesystem::create_symlink(target, link);
  StateDict next = next_checkpoint();
  save(next, link);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_all(target), safetensors::to_bytes(next));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"latest.safetensors", "real"}));
}

TEST(AtomicSave, PermissionBitsOfTheReplacedFileAreKept) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save(previous_checkpoint(), path);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  save(next_checkpoint(), path);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

}  // namespace
}  // namespace graft::testing
