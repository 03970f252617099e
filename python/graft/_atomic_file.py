"""Atomic file replacement for graft.save's PyTorch-format files, with the rules of the C++
safetensors writer (src/serialize/atomic_save.cpp): write ``.<name>.tmp-<pid>-<n>`` next to the
target (held with flock while written), fsync it, rename it over the target, fsync the
directory; an error removes the temporary; the next save removes temporaries that killed saves
left (their process gone, nobody holding them locked). See docs/checkpoints.md ("Atomic saves")."""
import errno
import fcntl
import itertools
import os
import re
import stat

_counter = itertools.count()
_TEMPORARY = re.compile(r"\.(.+)\.tmp-([0-9]{1,9})-([0-9]+)", re.DOTALL)


def _fail(user_path, step, err):
    """The C++ writer's error for a failed step."""
    return RuntimeError(f"save: cannot write '{user_path}': {step}: {os.strerror(err)}")


def _resolve_target(path):
    """The file to replace: ``path``, or what a symlink at ``path`` points to."""
    if os.path.islink(path):
        try:
            return os.path.realpath(path, strict=True)
        except (OSError, TypeError):  # a dangling link (or Python < 3.10, without strict)
            return os.path.realpath(path)
    return path


def _remove_stale_temporaries(directory):
    """Removes the temporaries of saves that were killed: a regular file named as a temporary,
    whose process is gone and that nobody holds locked. Best effort: errors are ignored."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = _TEMPORARY.fullmatch(name)
        if m is None or int(m.group(2)) in (0, os.getpid()):
            continue
        try:
            os.kill(int(m.group(2)), 0)
            continue  # alive
        except ProcessLookupError:
            pass
        except OSError:
            continue  # alive, or not ours to signal
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


def _create_temporary(target, user_path):
    """(fd, path) of a new temporary next to ``target``, locked, with the target's mode."""
    directory, base = os.path.split(target)
    for attempt in itertools.count():
        tmp = os.path.join(directory, f".{base}.tmp-{os.getpid()}-{next(_counter)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            if attempt == 100:
                raise _fail(user_path, f"cannot create temporary file '{tmp}'", errno.EEXIST) from None
        except OSError as e:
            raise _fail(user_path, f"cannot create temporary file '{tmp}'", e.errno) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass
    try:  # keep an existing file's permission bits
        st = os.stat(target)
        if stat.S_ISREG(st.st_mode):
            os.fchmod(fd, st.st_mode & 0o7777)
    except OSError:
        pass
    return fd, tmp


def _sync_directory(directory, user_path):
    """fsyncs the directory so that the rename is durable."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise _fail(user_path, "the file was replaced, but opening its directory to sync it failed", e.errno) from None
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EINVAL:  # some file systems cannot sync a directory
            raise _fail(user_path, f"the file was replaced, but syncing its directory '{directory or '.'}' failed",
                        e.errno) from None
    finally:
        os.close(fd)


def write_atomically(path, write):
    """Calls ``write(binary_file)`` on a temporary next to ``path`` and renames it over
    ``path``; on any error the temporary is removed and ``path`` is untouched."""
    user_path = os.fsdecode(os.fspath(path))
    if "\0" in user_path:
        raise ValueError("embedded null byte")
    target = _resolve_target(user_path)
    directory = os.path.dirname(target)
    _remove_stale_temporaries(directory or ".")
    fd, tmp = _create_temporary(target, user_path)
    committed = False
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            try:
                os.fsync(fh.fileno())
            except OSError as e:
                raise _fail(user_path, f"fsync of '{tmp}' failed", e.errno) from None
        try:
            os.rename(tmp, target)
        except OSError as e:
            raise _fail(user_path, f"renaming '{tmp}' over it failed", e.errno) from None
        committed = True
    except OSError as e:
        raise _fail(user_path, f"writing '{tmp}' failed", e.errno or errno.EIO) from None
    finally:
        if not committed:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _sync_directory(directory, user_path)
