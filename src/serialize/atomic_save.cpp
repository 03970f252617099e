// save(): write to a temporary file next to the target, fsync it, rename it over the target,
// fsync the directory. Until the rename succeeds the target is never opened for writing, and a
// failure at any step (or an exception out of the writer) removes the temporary file.
// Also the test-only fault injection that proves it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "graft/core/error.h"
#include "writer.h"

namespace graft::safetensors {
namespace detail {
namespace {

namespace fs = std::filesystem;

// ---- fault injection (tests only) ----
std::atomic<SaveFault> g_fault{SaveFault::None};
std::atomic<int> g_fault_nth{1};
std::atomic<int> g_write_calls{0};

// True (and disarmed) when `fault` is armed and due.
bool fault_fires(SaveFault fault, int call) {
  if (g_fault.load() != fault) return false;
  if ((fault == SaveFault::WriteError || fault == SaveFault::WriteThrows) && call != g_fault_nth.load()) return false;
  g_fault.store(SaveFault::None);
  return true;
}

ssize_t write_with_faults(int fd, const char* data, size_t n) {
  const int call = ++g_write_calls;
  if (fault_fires(SaveFault::WriteThrows, call)) throw std::runtime_error("injected exception in write");
  if (fault_fires(SaveFault::WriteError, call)) {
    errno = EIO;
    return -1;
  }
  return ::write(fd, data, n);
}

int fsync_with_faults(int fd) {
  if (fault_fires(SaveFault::FsyncError, 0)) {
    errno = EIO;
    return -1;
  }
  return ::fsync(fd);
}

int rename_with_faults(const char* from, const char* to) {
  if (fault_fires(SaveFault::RenameError, 0)) {
    errno = EIO;
    return -1;
  }
  return ::rename(from, to);
}

// ---- the temporary file ----

[[noreturn]] void throw_save_error(const std::string& path, const std::string& step, int err) {
  throw RuntimeError("save: cannot write '" + path + "': " + step + ": " + std::strerror(err));
}

// A new file next to the target, removed on destruction unless commit() renamed it into place.
class TempFile {
 public:
  TempFile(const fs::path& target, const std::string& user_path) : user_path_(user_path) {
    static std::atomic<uint64_t> counter{0};
    const fs::path dir = target.parent_path();
    std::string base(1, '.');  // built by appends: GCC 12 misreports `"." + string&&` (-Wrestrict)
    base += target.filename().string();
    base += ".tmp-" + std::to_string(::getpid()) + "-";
    for (int attempt = 0; fd_ < 0; ++attempt) {
      path_ = (dir / (base + std::to_string(counter++))).string();
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt == 100))
        throw_save_error(user_path_, "cannot create temporary file '" + path_ + "'", errno);
    }
    // Keep an existing file's permission bits (best effort: the umask'd default otherwise).
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) (void)::fchmod(fd_, st.st_mode & 07777);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  void sync_and_close() {
    if (fsync_with_faults(fd_) != 0) throw_save_error(user_path_, "fsync of '" + path_ + "' failed", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw_save_error(user_path_, "closing '" + path_ + "' failed", errno);
  }
  void commit(const fs::path& target) {
    if (rename_with_faults(path_.c_str(), target.c_str()) != 0)
      throw_save_error(user_path_, "renaming '" + path_ + "' over it failed", errno);
    committed_ = true;
  }

 private:
  std::string user_path_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

class FileSink final : public ByteSink {
 public:
  FileSink(const TempFile& file, const std::string& user_path) : file_(file), user_path_(user_path) {}
  void write(const char* data, size_t n) override {
    constexpr size_t kMaxChunk = size_t{1} << 30;
    while (n > 0) {
      const ssize_t w = write_with_faults(file_.fd(), data, std::min(n, kMaxChunk));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw_save_error(user_path_, "writing '" + file_.path() + "' failed", w < 0 ? errno : EIO);
      data += w;
      n -= static_cast<size_t>(w);
    }
  }

 private:
  const TempFile& file_;
  const std::string& user_path_;
};

// The file to replace: `path`, or what a symlink at `path` points to.
fs::path resolve_target(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_symlink(fs::symlink_status(p, ec))) {
    fs::path real = fs::canonical(p, ec);
    if (!ec) return real;
  }
  return p;
}

void sync_directory(const fs::path& dir, const std::string& user_path) {
  const std::string d = dir.empty() ? "." : dir.string();
  const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_save_error(user_path, "the file was replaced, but opening its directory to sync it failed", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync a directory (EINVAL): nothing more can be done there.
  if (rc != 0 && err != EINVAL)
    throw_save_error(user_path, "the file was replaced, but syncing its directory '" + d + "' failed", err);
}

}  // namespace

void set_save_fault_for_testing(SaveFault fault, int nth) {
  g_fault_nth.store(nth);
  g_fault.store(fault);
}

int last_save_write_count_for_testing() { return g_write_calls.load(); }

}  // namespace detail

void save(const StateDict& tensors, const std::string& path, const Metadata& metadata) {
  using namespace detail;
  const WritePlan plan = plan_write(tensors, metadata, "save");  // validate before touching the disk
  GRAFT_CHECK(!path.empty(), ValueError, "save: the path is empty");
  const fs::path target = resolve_target(path);
  g_write_calls.store(0);
  TempFile tmp(target, path);
  FileSink sink(tmp, path);
  write_file_bytes(plan, sink);
  tmp.sync_and_close();
  tmp.commit(target);
  sync_directory(target.parent_path(), path);
}

}  // namespace graft::safetensors
