"""Golden data as files: ``opsnn verify --dump DIR`` writes each case it runs to a folder.

A case folder holds one raw binary file per tensor, as CANN's ``gen_data.py`` scripts write them
with ``ndarray.tofile`` (C order, little-endian, no header; bfloat16 as its 2-byte pattern):
every input under its aclnn name (``gradOutput.bin``, ``self.bin``), ``golden.bin`` (the golden
the case was judged against: ``opsnn.reference`` or torch) and ``output.bin`` (what opsnn's
aclnn call wrote), beside ``case.json``, which gives each file's dtype (its aclDataType name,
``ACL_FLOAT16``, and NumPy's) and shape, each tensor's format, the scalars and flags, the
tolerance, the seed and the verdict, so a board test can feed the same inputs and compare with
the same golden. A case whose aclnn call failed gets its inputs and verdict only; a case skipped
or failed otherwise, nothing. A case folder is the run's whole: an earlier run's case folders
(those holding a case.json) are emptied, a board's files in them too (``clear``: computed from
inputs the run replaces), and those this run does not write removed; a write stopped midway
(a Ctrl-C, a full disk) removes what it wrote, so every folder with files has its case.json.
``index.json`` lists the folders the run wrote. ``load`` reads a folder back, checking each file
against its entry (``GoldenFileError`` otherwise); ``opsnn compare`` (``opsnn.compare``) reads a
board's result beside the golden the same way.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from pathlib import Path

import numpy as np

from ._core.dtypes import from_numpy, holds_data, parse_name, to_numpy
from ._core.shape import INT64_MAX
from .cli_files import make_writable_folder, read_json, remove_tree, strict_json

INDEX = "index.json"  # the run's list of case folders, beside them (no file label takes the name)
PARTIAL_INDEX = ".index.json.partial"  # the index while it is written (nor this one)


class GoldenFileError(ValueError):
    """A case folder ``load`` cannot read as written: the message names the file, the field of
    ``case.json``, what was expected and what was found."""


def file_labels(paths: list[str]) -> dict[str, str]:
    """A folder name per case file of a run: its file name (``atk_x.json``), then ``-2``, ``-3``
    ... for other files of the same name (``a/x.json`` and ``b/x.json`` would share a folder)
    and for one named as the index (or its partial name); the same file given twice keeps one."""
    labels: dict[str, str] = {}
    for path in paths:
        key = str(Path(path).resolve())
        if key not in labels:
            name, taken = Path(path).name, {*labels.values(), INDEX, PARTIAL_INDEX}
            labels[key] = next(label for label in (name, *(f"{name}-{k}" for k in range(2, len(paths) + 2)))
                               if label not in taken)
    return labels


def case_folder(root: str | Path, label: str, index: int, case_name: str) -> Path:
    """``root/<label>/<index, 4 digits>_<case name, path-safe>``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", case_name).strip("._") or "case"
    return Path(root) / label / f"{index:04d}_{safe[:80]}"


def probe(root: str | Path, removed: list[Path], own: list[Path] = ()) -> list[Path]:
    """Make ``root`` and check a file can be written there (OSError if not), before a run; the
    case folders an earlier run's index lists are emptied (``clear``; what no dump wrote there is
    appended to ``removed`` as it goes, so an OSError midway leaves it saying what went) and
    removed, with their case file's folder where nothing else is in it (an OSError naming the
    folder where the system refuses either), then the index itself (an interrupted run must not
    leave it describing new files; a new user's: a second run of fewer cases left the first
    run's other folders beside its own). Those among ``own``, the case folders the run writes,
    are emptied and kept, to be written in place (removed and made again, a case file's folder
    that takes no new entry had refused the run: a breaker); returned, so that the run removes
    those it then writes nothing in (``remove_empty``). Refused (or stopped by a Ctrl-C) part
    way, it removes those kept (where the system lets it) and leaves the index listing the
    folder refused and those after it, not those already gone (one removed before its case
    file's folder was refused among them), so that a later run cleans them and ``opsnn
    compare`` names that folder; stopped as the index itself goes, it removes the index. Only
    folders below ``root`` are touched. An ``index.json`` there that is not of opsnn's shape
    (another program's, a folder) is a ValueError, before anything is made or written: the run
    would replace it (a breaker), and --dump replaces only its own, as --json replaces only a
    results file; an empty one is replaced (as --json replaces an empty file)."""
    folder = Path(root)
    index = folder / INDEX
    earlier = earlier_index(index)
    make_writable_folder(folder)
    inside, keep = folder.resolve(), {Path(f).resolve(): Path(f) for f in own}
    kept: list[Path] = []
    done = 0  # the entries before it are gone, kept, or were never a dump's folder below DIR
    try:
        for done, case in enumerate(earlier["cases"]):  # (done: read where it stops)
            stale = (folder / str(case)).resolve()
            if stale != inside and stale.is_relative_to(inside):
                _empty_earlier(folder / str(case), stale, removed)
                if stale in keep:
                    kept.append(keep[stale])
                else:
                    _remove_earlier(folder / str(case), stale, inside)
        done = len(earlier["cases"])  # every folder done with: what is left to go is the index
        index.unlink(missing_ok=True)
    except BaseException:
        for emptied in kept:  # (no case will write them now)
            with contextlib.suppress(OSError):
                remove_empty(emptied.resolve(), inside)
        if done == len(earlier["cases"]):  # stopped as the index went (a Ctrl-C): it goes, as it would
            with contextlib.suppress(OSError):  # have (a breaker: it stayed, listing every folder gone)
                index.unlink(missing_ok=True)
            raise
        # refused part way (or a Ctrl-C): the index is kept, so that a later run cleans what is left,
        # but lists only that, the refused folder first; listing the folders gone too, it had opsnn
        # compare refuse the dump naming the first of those, not the one refused (a breaker)
        left = _left(folder, earlier["cases"][done:])
        if len(left) < len(earlier["cases"]):
            with contextlib.suppress(OSError):  # (the refusal is the error to report)
                _replace_index(folder, {**earlier, "cases": left})
        raise
    return kept


def _left(root: Path, cases: list) -> list:
    """``cases``, the earlier index's entries from the one a refused probe stopped at, without that
    one where its folder is gone: removed, and its case file's folder then refused (a breaker: the
    index listed the missing folder, and compare refused the dump naming its case.json)."""
    return cases[1:] if cases and not os.path.lexists(root / str(cases[0])) else cases


def _empty_earlier(shown: Path, stale: Path, removed: list[Path]) -> None:
    """``clear`` the earlier index's case folder ``stale`` (``shown`` as the index names it),
    an OSError naming it where refused (a board's files the system will not remove), not just DIR."""
    try:
        clear(stale, removed)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot empty the earlier run's case folder {str(shown)!r}: "
                                 f"{exc.strerror}") from exc


def _remove_earlier(shown: Path, stale: Path, inside: Path) -> None:
    """``remove_empty`` the earlier index's case folder ``stale``, emptied, an OSError naming it
    (or its case file's folder, read-only) where refused, not just DIR."""
    try:
        remove_empty(stale, inside)
    except OSError as exc:
        own = exc.filename in (None, str(stale))
        what, named = ("case folder", shown) if own else ("case file's folder", shown.parent)
        raise OSError(exc.errno, f"cannot remove the earlier run's {what} {str(named)!r}, emptied: "
                                 f"{exc.strerror}") from exc


def remove_empty(folder: Path, root: Path) -> None:
    """Remove the case folder ``folder`` and then its case file's folder, each where empty, never
    ``root`` (the dump's folder): what a rerun emptied and did not write again goes, whether the
    earlier run's index listed it and no case of the run writes it (``probe``) or it is one of
    the run's own, emptied (by its case or the probe), where the case then wrote nothing
    (``verify_case``, after the case: one it skipped was left behind, empty, a breaker's)."""
    for empty in (folder, folder.parent):
        if empty != root and empty.is_dir() and not any(empty.iterdir()):
            empty.rmdir()


def earlier_index(index: Path) -> dict:
    """An earlier run's ``index`` as read: its ``settings`` and the ``cases`` it lists (none
    where there is no index, or an empty file); ValueError where ``index`` is not of the shape
    ``write_index`` writes. Another OSError than its absence (a folder that cannot be read) is
    raised: the run cannot write."""
    try:
        text = index.read_text()
        document = read_json(text) if text else {"settings": {}, "cases": []}
    except (FileNotFoundError, NotADirectoryError):
        return {"settings": {}, "cases": []}
    except (IsADirectoryError, ValueError):  # a folder; no UTF-8, or no JSON
        document = None
    if not (isinstance(document, dict) and isinstance(document.get("settings"), dict)
            and isinstance(document.get("cases"), list)):
        raise ValueError(  # noqa: TRY004 - a file not opsnn's, as one that is no JSON
            f"--dump: {str(index)!r} exists and is not the index of an opsnn verify --dump, the only {INDEX} "
            "--dump replaces; remove it or name another DIR")
    return document


def clear(folder: Path, removed: list[Path]) -> bool:
    """Empty a case folder an earlier run wrote, one holding a ``case.json``: every file and
    folder in it, a board's results too (computed from the inputs this run replaces, they were
    judged against a golden they were never computed for: a breaker), case.json last (a run
    stopped midway leaves it, so the next run empties the folder again). A folder without
    case.json is no dump's case folder and is left as it is. What it removes that the case.json
    did not name (a board's files and folders) is appended to ``removed`` as each goes, so that
    the run can say so, an OSError midway included: a user's files never go unsaid. Returns
    whether it emptied the folder (``remove_empty`` then removes it)."""
    manifest = folder / "case.json"
    if not manifest.is_file():
        return False
    named = _named_files(folder)
    for path in sorted(folder.iterdir()):
        foreign = path != manifest and path.name not in named
        if path.is_dir() and not path.is_symlink():  # (a link goes, never what it points to)
            _remove_tree_noting(path, removed if foreign else [])
        elif path != manifest:
            path.unlink(missing_ok=True)
        if foreign:
            removed.append(path)
    manifest.unlink(missing_ok=True)
    return True


def _remove_tree_noting(folder: Path, removed: list[Path]) -> None:
    """``cli_files.remove_tree(folder)``, noting what went: where it stops part way (an OSError: a
    file the system will not remove), the entries of ``folder`` it had removed are appended to
    ``removed`` before the error goes on, a subfolder that went whole as one entry, as ``clear``
    counts a folder (a breaker: the board's files it took had gone unsaid, the line naming only
    what went whole)."""
    inside = sorted(Path(top, name) for top, folders, files in os.walk(folder) for name in (*folders, *files))
    try:
        remove_tree(folder)
    except OSError:
        gone = {path for path in inside if not os.path.lexists(path)}
        removed.extend(path for path in inside if path in gone and path.parent not in gone)
        raise


def _named_files(folder: Path) -> set[str]:
    """The file names ``folder``'s case.json gives its tensors (none where it cannot be read)."""
    try:
        manifest = read_manifest(folder)
    except GoldenFileError:
        return set()
    entries = [*manifest["inputs"].values(), manifest.get("golden"), manifest.get("output")]
    return {entry["file"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("file"), str)}


def write(folder: Path, manifest: dict, inputs: dict[str, np.ndarray], golden: np.ndarray | None,
          output: np.ndarray | None) -> None:
    """Write the tensors and ``case.json`` (``manifest`` plus each file's entry) into ``folder``,
    which ``clear`` has emptied; ``golden`` / ``output`` None (a call that failed before its
    result) leaves theirs out."""
    folder.mkdir(parents=True, exist_ok=True)
    made = [folder / "case.json"]
    try:
        document = dict(manifest)
        document["inputs"] = {role: _tofile(folder, role, array, made) for role, array in inputs.items()}
        if golden is not None:
            document["golden"] = {**document.get("golden", {}), **_tofile(folder, "golden", golden, made)}
        if output is not None:
            document["output"] = _tofile(folder, "output", output, made)
        (folder / "case.json").write_text(strict_json(document, indent=1) + "\n")
    except BaseException:
        # a Ctrl-C or a full disk midway: what this write made goes, case.json (written last) too,
        # so no folder of files without their case.json stays, which no later run would remove
        # (``clear`` goes by a case.json) and a board's loop over the folders would walk into (a
        # breaker). The files of other folders and the user's own beside them are left.
        for path in made:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()  # (only where now empty)
        raise


def write_index(root: str | Path, settings: dict, folders: list[Path]) -> None:
    """``root/index.json``: the run's settings and the case folders it wrote, in order (folders
    an earlier run left beside them are not this run's). OSError where it cannot be written,
    leaving no index (nor a part of one) behind."""
    cases = list(dict.fromkeys(Path(f).relative_to(root).as_posix() for f in folders))  # a file given twice: once
    _replace_index(root, {"settings": settings, "cases": cases})


def _replace_index(root: str | Path, document: dict) -> None:
    """``root/index.json`` replaced by ``document`` whole, or left as it was (OSError)."""
    # written under a temporary name, then renamed: a full disk (ENOSPC) or a refused write leaves
    # no truncated index that opsnn compare would read as damaged (a breaker: a 0-byte index.json)
    partial = Path(root) / PARTIAL_INDEX
    try:
        partial.write_text(strict_json(document, indent=1) + "\n")
        os.replace(partial, Path(root) / INDEX)
    except BaseException:
        with contextlib.suppress(OSError):  # (the write's own error is the one to report)
            partial.unlink(missing_ok=True)
        raise


def load(folder: str | Path) -> dict:
    """A case folder read back: ``{"manifest": case.json, "inputs": {role: array}, "golden":
    array, "output": array}``, each array of its recorded dtype and shape (golden and output
    None where the case's call failed before its result).

    An entry's ``dtype`` may be written as CANN does (``ACL_FLOAT16``, ``DT_FLOAT16``, ``FLOAT16``)
    or as NumPy does (``float16``); ``numpy_dtype``, where given, must name the same type. Each
    file must hold exactly its shape's elements and, where given, ``bytes`` bytes. Raises
    GoldenFileError (a ValueError) for a case.json that is missing or unreadable, an entry
    without ``file``, ``dtype`` or ``shape``, a dtype with no NumPy type or a shape NumPy cannot
    hold (more than its 64 dims, an empty one whose size overflows), and a file that is
    missing or of another size (a truncated or padded file is never read as if whole)."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    return {"manifest": manifest,
            "inputs": {role: read_entry(folder, f"inputs.{role}", e) for role, e in manifest["inputs"].items()},
            **{key: read_entry(folder, key, manifest[key]) if has_file(manifest, key) else None
               for key in ("golden", "output")}}


def read_manifest(folder: Path) -> dict:
    """``folder/case.json`` as an object whose ``inputs`` is an object (GoldenFileError otherwise)."""
    path = folder / "case.json"
    try:
        manifest = read_json(path.read_text())
    except (OSError, ValueError) as exc:  # (JSONDecodeError, UnicodeDecodeError: ValueErrors)
        raise GoldenFileError(f"{path}: cannot read it as a case's manifest ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("inputs"), dict):
        raise GoldenFileError(f"{path}: expected an object whose 'inputs' maps each role to its file's entry")
    return manifest


def is_plain_name(name) -> bool:
    """Whether a case.json ``file`` names a file in the case folder itself: no folder, absolute
    path or ``..`` (``read_entry`` reads only such files; ``clear`` empties a case folder whole)."""
    return isinstance(name, str) and name == Path(name).name and name not in ("", ".", "..")


def has_file(manifest: dict, key: str) -> bool:
    """Whether the manifest's ``golden`` / ``output`` entry names a file (a case whose call
    failed before its result has none)."""
    return isinstance(manifest.get(key), dict) and "file" in manifest[key]


def is_dims(shape) -> bool:
    """Whether ``shape`` read from a case file (a case.json entry here, a case of ``opsnn
    verify``'s files there) is a shape: a list or tuple of integer dims from 0 to 2**63 - 1 (an
    aclTensor's dims are int64), never a bool (JSON's ``true`` is an int to Python)."""
    return isinstance(shape, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= INT64_MAX for d in shape)


def entry_layout(folder: Path, key: str, entry) -> tuple[np.dtype, list[int]]:
    """The NumPy dtype and the shape of the case.json entry at ``key`` (``inputs.self``),
    checked as ``load`` describes (GoldenFileError naming the field otherwise)."""
    where = f"{folder / 'case.json'}: {key}"
    missing = [f for f in ("file", "dtype", "shape") if not isinstance(entry, dict) or f not in entry]
    if missing:
        raise GoldenFileError(f"{where} has no {', '.join(missing)}; expected an entry with file, dtype and shape")
    shape, text = entry["shape"], entry["dtype"]
    if not is_plain_name(entry["file"]):  # (a breaker: /etc/passwd and ../ were read)
        raise GoldenFileError(f"{where}.file is {entry['file']!r}; expected the name of a file in the case folder "
                              "(no folder, absolute path or ..)")
    if "bytes" in entry and not (isinstance(entry["bytes"], int) and not isinstance(entry["bytes"], bool)):
        raise GoldenFileError(f"{where}.bytes is {entry['bytes']!r}; expected an integer count of bytes")
    if not is_dims(shape):
        raise GoldenFileError(f"{where}.shape is {shape!r}; expected a list of non-negative integer dims")
    try:
        acl = parse_name(str(text))  # (the CLI's --dtype grammar)
    except ValueError as exc:
        raise GoldenFileError(f"{where}.dtype is {text!r}; expected an aclDataType name (ACL_FLOAT16, "
                              f"DT_FLOAT16, FLOAT16) or NumPy's (float16): {exc}") from None
    if not holds_data(acl):
        raise GoldenFileError(f"{where}.dtype is {text!r}, which NumPy has no type to read the file as; "
                              "expected one it has (ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_INT32 ...)")
    dtype = to_numpy(acl)
    if entry.get("numpy_dtype", dtype.name) != dtype.name:
        raise GoldenFileError(f"{where}.numpy_dtype is {entry['numpy_dtype']!r}, expected {dtype.name!r} "
                              f"(its dtype {text!r})")
    try:  # (allocating nothing: an empty shape as it is, another's rank alone, its size the file's to match)
        np.empty(shape if math.prod(shape) == 0 else [0] * len(shape), dtype)
    except ValueError as exc:  # more dims than NumPy's limit, an empty one whose size overflows (a breaker)
        raise GoldenFileError(f"{where}.shape {shape} is a shape NumPy cannot hold ({exc}); verify --dump writes "
                              "only shapes it holds") from None
    return dtype, shape


def read_entry(folder: Path, key: str, entry, file: str | None = None) -> np.ndarray:
    """The array of the case.json entry at ``key`` (``inputs.self``), its file checked against
    it; ``file``: read that file of the folder instead, laid out as the entry says (a board's
    result written as ``output.bin`` is: ``opsnn compare --output``). GoldenFileError for a
    malformed entry (``entry_layout``) and for a file that is missing or of another size."""
    path, dtype, shape = checked_entry(folder, key, entry, file)
    try:
        return np.fromfile(path, dtype=dtype).reshape(shape)
    except OSError as exc:  # unreadable, or gone since the check
        raise GoldenFileError(f"{path}: {exc.strerror}") from None


def checked_entry(folder: Path, key: str, entry, file: str | None = None) -> tuple[Path, np.dtype, list[int]]:
    """``read_entry``'s checks without reading the data: the file's path, dtype and shape, or
    GoldenFileError (``opsnn compare`` checks the input files so, which it reads only to explain
    a torch golden: a truncated one had passed)."""
    dtype, shape = entry_layout(folder, key, entry)
    where = f"{folder / 'case.json'}: {key}"
    path = folder / str(entry["file"] if file is None else file)
    wanted = math.prod(shape) * dtype.itemsize
    named = (f"{where}.file names it" if file is None else
             f"expected {wanted} bytes: {where}.shape {shape} of {dtype.name}")
    try:
        size = path.stat().st_size
        if not path.is_file():  # (a folder's size can be the one wanted: np.fromfile then raised)
            kind = "a folder, not a file" if path.is_dir() else "not a regular file (a FIFO, socket or device)"
            raise GoldenFileError(f"{path} is {kind} ({named})")
        if size != wanted:
            raise GoldenFileError(f"{path} holds {size} bytes, expected {wanted}: {where}.shape {shape} of "
                                  f"{dtype.name}, {dtype.itemsize} bytes each")
        if entry.get("bytes", size) != size:
            raise GoldenFileError(f"{path} holds {size} bytes, expected {entry['bytes']!r}: {where}.bytes")
    except OSError as exc:  # missing, or gone between the checks
        raise GoldenFileError(f"{path}: {exc.strerror} ({named})") from None
    return path, dtype, shape


def _tofile(folder: Path, stem: str, array: np.ndarray, made: list[Path]) -> dict:
    """Write ``array`` as ``folder/<stem>.bin`` (its path appended to ``made`` first); its entry."""
    data = np.asarray(array, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    if data.dtype.byteorder == ">":  # the files are little-endian whatever the host
        data = data.astype(data.dtype.newbyteorder("<"))
    path = folder / f"{stem}.bin"
    made.append(path)
    data.tofile(path)
    return {"file": path.name, "dtype": from_numpy(data.dtype).acl_name, "numpy_dtype": data.dtype.name,
            "shape": list(data.shape), "bytes": data.nbytes}

