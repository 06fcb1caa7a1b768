"""Golden data as files: ``opsnn verify --dump DIR`` writes each case it runs to a folder.

A case folder holds one raw binary file per tensor, as CANN's ``gen_data.py`` scripts write them
with ``ndarray.tofile`` (C order, little-endian, no header; bfloat16 as its 2-byte pattern):
every input under its aclnn name (``gradOutput.bin``, ``self.bin``), ``golden.bin`` (the golden
the case was judged against: ``opsnn.reference`` or torch) and ``output.bin`` (what opsnn's
aclnn call wrote), beside ``case.json``, which gives each file's dtype (its aclDataType name,
``ACL_FLOAT16``, and NumPy's) and shape, the scalars and flags, the tolerance, the seed and the verdict, so a
board test can feed the same inputs and compare with the same golden. ``load`` reads a folder
back.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from ._core.dtypes import DataType, from_numpy, to_numpy


def case_folder(root: str | Path, file: str, index: int, case_name: str) -> Path:
    """``root/<case file's stem>/<index, 4 digits>_<case name, path-safe>``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", case_name).strip("._") or "case"
    return Path(root) / Path(file).stem / f"{index:04d}_{safe[:80]}"


def write(folder: Path, manifest: dict, inputs: dict[str, np.ndarray], golden: np.ndarray,
          output: np.ndarray) -> None:
    """Write the tensors and ``case.json`` (``manifest`` plus each file's entry) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    document = dict(manifest)
    document["inputs"] = {role: _tofile(folder, role, array) for role, array in inputs.items()}
    document["golden"] = {**document.get("golden", {}), **_tofile(folder, "golden", golden)}
    document["output"] = _tofile(folder, "output", output)
    (folder / "case.json").write_text(json.dumps(_strict(document), indent=1, allow_nan=False) + "\n")


def load(folder: str | Path) -> dict:
    """A case folder read back: ``{"manifest": case.json, "inputs": {role: array}, "golden":
    array, "output": array}``, each array of its recorded dtype and shape."""
    folder = Path(folder)
    manifest = json.loads((folder / "case.json").read_text())

    def read(entry: dict) -> np.ndarray:
        dtype = to_numpy(DataType[entry["dtype"].removeprefix("ACL_")])
        return np.fromfile(folder / entry["file"], dtype=dtype).reshape(entry["shape"])

    return {"manifest": manifest, "inputs": {role: read(e) for role, e in manifest["inputs"].items()},
            "golden": read(manifest["golden"]), "output": read(manifest["output"])}


def _tofile(folder: Path, stem: str, array: np.ndarray) -> dict:
    data = np.ascontiguousarray(array)
    if data.dtype.byteorder == ">":  # the files are little-endian whatever the host
        data = data.astype(data.dtype.newbyteorder("<"))
    path = folder / f"{stem}.bin"
    data.tofile(path)
    return {"file": path.name, "dtype": from_numpy(data.dtype).acl_name, "numpy_dtype": data.dtype.name,
            "shape": list(data.shape), "bytes": data.nbytes}


def _strict(value):
    """JSON without NaN / inf (strict readers refuse them): those floats as "nan", "inf", "-inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value
