"""The files the ``opsnn`` commands read and write beside their arguments: JSON read with a
depth limit and unique keys (``read_json``) and written strictly (``strict_json``), the folders
an output goes into and ``remove_tree`` for the folders a command removes (a dump's case folders,
the kernel cache's), and ``OutputError``, an output the system would not take (exit 1).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import sys
from pathlib import Path


class OutputError(Exception):
    """An output a command was asked to write (``--json PATH``, ``--dump DIR``'s index) that the
    system would not take: a missing folder, a refused or full disk. An I/O failure, exit 1 in
    ``cli.main``, where a usage error is 2; the message names the option, the path and the
    system's reason (``strerror``: "No space left on device"), on one line."""

    def __init__(self, option: str, path, reason: OSError | str, what: str = ""):
        if isinstance(reason, OSError):
            reason = reason.strerror or str(reason)
        super().__init__(f"{option}: cannot write {what + ' ' if what else ''}{str(path)!r}: {reason}")


def strict_json(document, indent: int | None) -> str:
    """``document`` as strict JSON, which has no NaN or Infinity (strict readers, ``jq`` among them,
    refuse or rewrite them): a non-finite float, at any depth, is written as the string "nan",
    "inf" or "-inf", which ``float()`` reads back. One place for the results file (verify,
    compare), the --dump files, ``opsnn tiling --json`` and bench.json."""
    return json.dumps(_finite(document), indent=indent, allow_nan=False)


# How deep the JSON opsnn reads may nest: its own files nest a few levels, and Python's reader
# recurses per level, failing near the interpreter's recursion limit (~1000), while a document
# that loads just short of it left too little stack for the next step (a message quoting it)
JSON_MAX_DEPTH = 100


def read_json(text: str):
    """``json.loads(text)``, where a document nested more than ``JSON_MAX_DEPTH`` levels deep is
    a ValueError saying so, as any other malformed JSON is (``[[[...]]]`` 100 000 deep was a
    RecursionError, a traceback of verify, compare and ``golden_files.load``). One reader for
    every JSON file opsnn reads: case files, case.json, the dump's index, an earlier --json
    results file. An object naming a key twice is a ValueError too: the reader would keep the
    last silently (a case's aclnn_name written twice ran the second operator)."""
    deep = ValueError(f"its arrays and objects nest more than {JSON_MAX_DEPTH} levels deep (opsnn's JSON files "
                      "nest a few; Python's JSON reader gives up near 1000)")
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise deep from None
    # (iterative: a walk by recursion would meet the limit the reader met); only arrays and
    # objects are pushed: a regression breaker's million-number array had pushed each number
    stack = [(document, 1)] if isinstance(document, (list, dict)) else []
    while stack:
        value, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            raise deep
        stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)
                     if isinstance(item, (list, dict)))
    return document


def _unique_keys(pairs: list) -> dict:
    """``read_json``'s objects: a dict of ``pairs``, refused where a key comes twice."""
    document = dict(pairs)
    if len(document) < len(pairs):
        seen = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise ValueError(f"an object names the key {twice!r} twice; a JSON reader would keep one of them silently")
    return document


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def make_writable_folder(folder: Path) -> None:
    """Make ``folder`` (with its parents) and check a file can be written there, before a run
    writes into it (OSError, the system's reason, if not). For bench's --out-dir and verify's
    --dump alike."""
    folder.mkdir(parents=True, exist_ok=True)
    test = folder / ".opsnn-write-test"
    test.write_bytes(b"")
    test.unlink()


def output_folder_refusal(option: str, text: str) -> str | None:
    """Why ``text`` cannot be the folder ``option`` writes into, seen before the system is asked
    to make it: a file of that name, or a symbolic link to nothing (a breaker: "cannot write
    into the folder 'dl': File exists", where nothing was); usage errors (exit 2). None where
    the system's answer decides (``OutputError``, exit 1, where it will not make it)."""
    if not text:  # (a breaker: Path("") is the current folder, written into without a word)
        return f"{option} is an empty path; name a folder ('.' for the current one)"
    path = Path(text)
    if path.is_symlink() and not path.exists():
        try:
            path.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # (a breaker: it named the next link as missing)
                return f"{option} {text!r} is a symbolic link in a loop of links; name a folder"
        return (f"{option} {text!r} is a symbolic link to {os.path.realpath(path)!r}, which does not exist; make "
                "that folder or name another")
    if path.exists() and not path.is_dir():
        return f"{option} {text!r} is a file, not a folder"
    return None


class _RefusedEntry(OSError):
    """A refusal ``remove_tree``'s hook raised, holding the entry's whole path (``entry``): Python
    3.13's rmtree hands an exception its hook raised while it scanned a folder back to the hook as
    the scan's own, its filename set to the folder (a board's file was named by its folder)."""

    entry = ""

    def __str__(self) -> str:  # rmtree's own refusal (a link where a folder was) has no errno: "[Errno None] None"
        return super().__str__() if self.errno is not None else f"{self.strerror}: {self.filename!r}"


def remove_tree(path, vanished_ok: bool = False) -> None:
    """``shutil.rmtree(path)``, its OSError naming the entry refused by its whole path: rmtree
    removes a folder's entries through the folder's descriptor, so its own error names a file
    inside by its name alone ("Operation not permitted: 'a'", breakers of ``cache --clear`` and
    ``verify --dump``); rmtree's own refusal, which has no errno (a folder swapped for a link
    meanwhile), in its words. ``vanished_ok``: an entry another process removed meanwhile counts
    as removed (a concurrent ``opsnn cache --clear``: what was asked)."""
    def refused(function, name, error):  # onexc (3.12+) passes the exception, onerror exc_info
        exc = error[1] if isinstance(error, tuple) else error
        if isinstance(exc, _RefusedEntry):  # (3.13: ours again, renamed to the folder)
            exc.filename = exc.entry
            raise exc
        if vanished_ok and isinstance(exc, FileNotFoundError):
            return
        if not isinstance(exc, OSError):
            raise exc
        # (rmtree's own refusal of a link has no strerror, only its words: 3.13 sets a filename on it too)
        reason = exc.strerror or (str(exc.args[0]) if exc.args else type(exc).__name__)
        again = _RefusedEntry(exc.errno, reason, os.fspath(name))
        again.entry = os.fspath(name)
        raise again from exc

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=refused)  # novermin: this branch runs on 3.12+ only
    else:
        shutil.rmtree(path, onerror=refused)
