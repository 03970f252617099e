"""The user's code as graft sees it: the first Python frame outside the graft package (where a
hook was registered, where a DataLoader was made) and whether a code object is the user's."""
import os
import sys

GRAFT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def first_user_frame(depth=1, also_skip=()):
    """The first frame outside graft (and the folders in ``also_skip``: a framework's package),
    starting ``depth`` frames above the caller; None if none."""
    skip = (GRAFT_DIR, *also_skip)
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(skip):
        f = f.f_back
    return f


def is_user_code(code):
    """Whether a code object is the user's Python (not graft's)."""
    return code is not None and not code.co_filename.startswith(GRAFT_DIR)
