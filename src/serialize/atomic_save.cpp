// save(): write to a temporary file next to the target, fsync it, rename it over the target,
// fsync the directory. Until the rename succeeds the target is never opened for writing, and a
// failure at any step (or an exception out of the writer) removes the temporary file. A process
// killed mid-save (kill -9) cannot remove its own: the next save in that folder does (a
// temporary whose process is gone and that nobody holds locked).
// Also the test-only fault injection that proves it.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
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
    // held while it is written (the lock dies with the process): another process's cleanup
    // (remove_stale_temporaries) never takes a temporary that is being written
    (void)::flock(fd_, LOCK_EX | LOCK_NB);
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

// The pid in a temporary's name ".<name>.tmp-<pid>-<n>", or 0 when the name is not one.
pid_t temporary_owner(const std::string& name) {
  const size_t at = name.rfind(".tmp-");
  if (name.size() < 2 || name[0] != '.' || at == std::string::npos || at == 0) return 0;
  const std::string rest = name.substr(at + 5);
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size() || dash > 9) return 0;
  for (size_t i = 0; i < rest.size(); ++i)
    if (i != dash && (rest[i] < '0' || rest[i] > '9')) return 0;
  return static_cast<pid_t>(std::stol(rest.substr(0, dash)));
}

// Removes the temporaries that saves killed mid-write left in `dir`: named as TempFile names
// them, regular files, their process gone (a live pid, even a reused one, keeps its file), and
// not locked by anyone (a writer holds its temporary locked). Best effort: errors are ignored.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = temporary_owner(name);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (!(::kill(pid, 0) != 0 && errno == ESRCH)) continue;  // alive (or not ours to signal)
    const std::string path = it->path().string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(path.c_str());
    ::close(fd);
  }
}

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
  remove_stale_temporaries(target.parent_path());
  TempFile tmp(target, path);
  FileSink sink(tmp, path);
  write_file_bytes(plan, sink);
  tmp.sync_and_close();
  tmp.commit(target);
  sync_directory(target.parent_path(), path);
}

}  // namespace graft::safetensors
