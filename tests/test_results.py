"""opsnn.results: the table verify and compare print, at the terminal widths people have."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from opsnn import results


def _render(width: int) -> str:
    rows = [results.Result(file="cases.csv", index=i, name=f"hardtanh_grad_fuzz_{i}_bf16", op="HardtanhBackward",
                           dtype="bfloat16", shape="30x8x22x21x11", numel=1_219_680, status=status,
                           max_abs=0.0, max_rel=0.0, bit_exact=True, note="note")
            for i, status in enumerate((results.PASS, results.SKIP, results.DOC))]
    console = Console(width=width, record=True, color_system=None)
    console.print(results.table("cases.csv", rows))
    return console.export_text()


def test_table_keeps_case_names_and_results_readable_at_any_width():
    """On a wide terminal (or a log: LOG_WIDTH) every column shows; on an 80- or 40-column one the
    least needed columns are left out, in a fixed order, and a caption says which, so each case
    name stays whole on its line (at 80 columns it had been folded two letters a line)."""
    wide = _render(results.LOG_WIDTH)
    for header in ("#", "case", "dtype", "shape", "elements", "result", "max abs", "max rel", "exact", "note"):
        assert header in wide
    assert "left out" not in wide and "1,219,680" in wide
    eighty = _render(80)
    for i, status in enumerate(("PASS", "SKIP", "DOC")):
        line = next(line for line in eighty.splitlines() if f"hardtanh_grad_fuzz_{i}_bf16" in line)
        assert status in line and "yes" in line
    assert "left out at this width: max rel, elements, max abs, shape; --json has them" in " ".join(eighty.split())
    assert "1,219,680" not in eighty
    forty = _render(40)
    assert all(len(line) <= 40 for line in forty.splitlines())
    assert "max rel, elements, max abs, shape, exact" in " ".join(forty.split())
    for status in ("PASS", "SKIP", "DOC"):
        assert status in forty


def test_a_refused_calls_note_keeps_its_status():
    """A FAIL's note is cut to fit the table; a refused call's "aclnnXxxGetWorkspaceSize
    returned 161002: ..." shows the status first (a breaker: the call's name alone had filled the
    room, cut mid-word, the status lost); the full text is printed below the table."""
    reason = ("aclnnLeakyReluBackwardGetWorkspaceSize returned 161002: LeakyReluBackward: the shape of "
              "gradOutput [3] and the shape of self [4] cannot broadcast")
    row = results.Result(file="c.json", index=0, name="c", op="LeakyReluBackward", dtype="fp32", shape="(3,)",
                         numel=3, status="FAIL", reason=reason)
    assert results._short_note(row) == "161002: LeakyReluBackward ... (below)"
    assert list(results.failures([row])) == [f"[bold red]FAIL[/] c.json #0 c: {reason}"]
    short = dataclasses.replace(row, reason="aclnnHardtanhBackwardGetWorkspaceSize returned 161002: bad out")
    assert results._short_note(short) == "161002: bad out"  # fits once rewritten: whole


def test_the_title_counts_one_case_as_one():
    """(A breaker: "(1 cases)".)"""
    def title(count: int) -> str:
        rows = [results.Result(file="c.csv", index=i, name=f"c{i}", op="Hardtanh", dtype="int32", shape="4",
                               numel=4, status=results.PASS) for i in range(count)]
        console = Console(width=results.LOG_WIDTH, record=True, color_system=None)
        console.print(results.table("c.csv", rows))
        return console.export_text().splitlines()[0]
    assert [title(n) for n in (1, 2)] == ["c.csv: Hardtanh (1 case)", "c.csv: Hardtanh (2 cases)"]


def test_text_from_a_case_file_or_case_json_is_printed_as_written():
    """(A breaker) a case name, reason or recorded SoC holding Rich markup was read as markup:
    ``case[/bad]`` raised MarkupError (a traceback, exit 1, no summary or --json) and
    ``[red]x[/red]`` lost its brackets. Each shows as the file writes it."""
    names = ["case[/bad]", "[red]x[/red] [bold]", "tail\\"]
    rows = [results.Result(file=f"runs/[red]f{i}.csv", index=i, name=name, op="Hardtanh", dtype="int32", shape="4",
                           numel=4, status=results.FAIL, reason=f"{name} [/x] refused", note="[i]note")
            for i, name in enumerate(names)]
    console = Console(width=results.LOG_WIDTH, record=True, color_system=None)
    console.print(results.table("c.csv", rows))
    for line in results.failures(rows):
        console.print(line, soft_wrap=True)
    console.print(results.summary_line(results.summary(rows, 0.0), "[/g]", "[b]soc", "[/s]"))
    text = console.export_text()
    for name in names:
        assert f"│ {name} " in text, text
    assert "FAIL [red]f0.csv #0 case[/bad]: case[/bad] [/x] refused; [i]note" in text
    assert "FAIL [red]f2.csv #2 tail\\: tail\\ [/x] refused; [i]note" in text
    assert text.rstrip().endswith("(golden [/g], SoC [b]soc, seed [/s])"), text


def test_a_run_of_no_case_is_nothing_checked_saying_why(capsys):
    """Exit 5 for a run that judged no case, each skipped or none at all (compare of a dump that
    lists none gives the reason; a run of no case had exited 0 as if it passed), 1 on a FAIL."""
    empty = {results.FAIL: 0, results.SKIP: 0, "total": 0}
    assert results.exit_status("compare", empty, "d/index.json lists no case folder") == 5
    assert capsys.readouterr().err == ("opsnn compare: no case compared: d/index.json lists no case folder; exit status "
                                       "5, not 0: a run that checked nothing is no pass\n")
    assert results.exit_status("verify", empty) == 5
    assert capsys.readouterr().err.startswith("opsnn verify: no case verified: there was none to check; exit status 5")
    assert results.exit_status("verify", {results.FAIL: 0, results.SKIP: 2, "total": 2}) == 5
    assert "no case verified: all 2 cases skipped (the table gives each reason); exit" in capsys.readouterr().err
    assert results.exit_status("verify", {results.FAIL: 1, results.SKIP: 0, "total": 1}) == 1
    assert results.exit_status("verify", {results.FAIL: 0, results.SKIP: 1, "total": 2}) == 0
