"""A command's stdout: a write the system refuses said in one line and exit 1 (``StdoutError``),
a reader that went away ending the command with 141, a process started without one given
/dev/null, and the rich console the commands print with (``PipeConsole``);
``run_writing_stdout`` holds the rule for ``cli.main`` and every script entry.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys

from rich.console import Console


def stdout_or_devnull() -> None:
    """Make ``sys.stdout`` /dev/null where the process started without one (descriptor 1 closed:
    ``opsnn list >&-``, a service's shut stdout; Python then sets it to None). print() writes
    nothing there, but the flush after a command raised AttributeError, a traceback and exit 1
    though the command had run (a breaker's); /dev/null takes descriptor 1, so the command runs
    as if its output were discarded. (The lowest free descriptor is 0 where stdin is closed too:
    /dev/null is moved onto 1, or the next file opened would become the process's stdout.)"""
    if sys.stdout is None:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 1 and not _is_open(1):  # (one a library opened since start is left alone)
            os.dup2(fd, 1)
            os.close(fd)
            fd = 1
        sys.stdout = open(fd, "w")  # noqa: SIM115 - the process's stdout, open to its end


class StdoutError(Exception):
    """stdout would not take a command's output: a full disk (``opsnn list > /dev/full``), an I/O
    error. Not an OSError, so no handler of input files' errors (a usage error, exit 2) takes it;
    ``unwritable_stdout`` ends the command. A closed pipe is not one (BrokenPipeError, 141)."""

    def __init__(self, reason: OSError, stream):
        target = _target_of(stream)
        super().__init__(f"cannot write the output to stdout{f' ({target})' if target else ''}: "
                         f"{reason.strerror or reason}")


def _target_of(stream) -> str | None:
    """What ``stream``'s descriptor leads to (a file's path, /dev/full, pipe:[...]), where Linux's
    /proc says; None elsewhere, or for a stream with no descriptor (a test's capture)."""
    try:
        return os.readlink(f"/proc/self/fd/{stream.fileno()}")
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


class _CheckedStdout:
    """``sys.stdout`` while ``checked_stdout`` holds: the stream itself, but a write or flush that
    fails for another reason than a closed pipe raises StdoutError, as every print of every
    command reaches it here."""

    def __init__(self, stream):
        self._stream = stream

    def _checked(self, method: str, *args):
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc, self._stream) from None

    def write(self, text: str) -> int:
        return self._checked("write", text)

    def flush(self) -> None:
        self._checked("flush")

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def checked_stdout():
    """Run a command (``cli.main``, the script entries) with its output's write errors said as
    StdoutError (``unwritable_stdout``): an OSError from a print was taken for an unreadable
    input file, a usage error (exit 2), or escaped as a traceback (a breaker's). A process
    started without a stdout gets /dev/null first (``stdout_or_devnull``)."""
    stdout_or_devnull()
    stream = sys.stdout
    checked = sys.stdout = _CheckedStdout(stream)
    try:
        yield
    finally:
        if sys.stdout is checked:  # (unless the command set its own)
            sys.stdout = stream


def unwritable_stdout(prog: str, exc: StdoutError) -> int:
    """The exit status of a command whose output stdout would not take (``StdoutError``): 1, an
    output that could not be written, as an output file's (``OutputError``), where 2 is a usage
    error's; one line on stderr naming stdout, where it leads and why. stdout becomes /dev/null,
    as in ``closed_stdout``: the interpreter's own flush at exit would fail again."""
    print(f"{prog}: {exc}", file=sys.stderr)
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


def run_writing_stdout(prog: str, command) -> int:
    """``command()``, a command's whole run returning its exit status, under ``checked_stdout``,
    its output flushed here: a reader of stdout that went away (``| head``) ends it with 141
    (``closed_stdout``), a stdout that would not take it (a full disk) with 1 and one line naming
    ``prog`` (``unwritable_stdout``), help and ``--version`` alike. One rule for ``cli.main`` and
    the script entries (the samples', the training's, ``bench.main``), where each had written it."""
    try:
        with checked_stdout():
            code = command()
            sys.stdout.flush()  # here: a closed pipe or a full disk is seen below, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return closed_stdout()
    except StdoutError as exc:
        return unwritable_stdout(prog, exc)


def closed_stdout() -> int:
    """The exit status of a process whose stdout's reader went away (``| head``), raised as
    BrokenPipeError in its output or its help: 141 (128 + SIGPIPE, a shell's status for a
    command that pipe ended), nothing on stderr. stdout becomes /dev/null first: the
    interpreter's own flush at exit would fail again, a traceback. Used by ``cli.main`` and the
    script entries (the samples', the training's, ``bench.main``), one rule for all."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class PipeConsole(Console):
    """rich's console, but a closed stdout (``opsnn ... | head``) raises BrokenPipeError for
    ``cli.main`` to end the command with status 141, where rich's own handling exits with 1,
    the status of a failed operator call."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.width < 1:
            # COLUMNS=0 (a script's `tput cols` of no terminal) made it 0 wide: `opsnn run` and
            # `opsnn demo` printed nothing at all; read as unset, as shutil reads it (the
            # terminal's width, else 80)
            self.width = shutil.get_terminal_size().columns

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError
