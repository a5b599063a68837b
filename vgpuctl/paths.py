"""What is wrong with a path the user named, in words (an adapter: it looks at the file system).

"no such file" for a directory, a device or an unreadable file sends people looking in the wrong place
(`--cert <dir>`, `KUBECONFIG=<dir>`, `certs --out <file>`): say what the path is instead.
"""

from __future__ import annotations

import os
import stat


def not_a_file(path: str) -> str | None:
    """Why `path` cannot be read as a regular file, or None when it can be (a link to a file is one)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except NotADirectoryError:
        return "no such file (a part of the path is not a directory)"
    except PermissionError:
        return "permission denied (a directory on the way cannot be entered)"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, pipe or socket)"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def not_a_directory(path: str) -> str | None:
    """Why `path` cannot be used as a directory to write into (None: it can, or does not exist yet)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISDIR(mode):
        return "exists and is not a directory"
    if not os.access(path, os.W_OK | os.X_OK):
        return "permission denied"
    return None
