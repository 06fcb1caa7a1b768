"""The README's runtime and aclnn snippets run as written and give the documented result."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_runtime_and_aclnn_snippets_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    code = blocks[0] + blocks[1] + "\nassert ret == 0\nprint(result.tolist())\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([2.0, 0.029999999329447746, 0.03999999910593033, 5.0])
