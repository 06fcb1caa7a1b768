"""The OPSNN_* byte-count variables: what they accept, and that a malformed one is ignored with a
warning (a fresh process with malformed ones: test_reliability's
test_malformed_variables_do_not_stop_opsnn)."""

import pytest

from opsnn._core import settings

GOOD = [("16777216", 16 << 20), ("16_777_216", 16 << 20), ("0", 0), (" 7 ", 7), ("1e9", 10**9),
        ("2.5e6", 2_500_000), ("64MiB", 64 << 20), ("2 GiB", 2 << 30), ("1.5GiB", 3 << 29),
        ("4kib", 4096), ("500MB", 500 * 10**6), ("3kB", 3000), ("12B", 12), ("1TiB", 1 << 40),
        # "set it huge": anything above int64 reads as its maximum, exponents Decimal cannot hold too
        ("9223372036854775807", 2**63 - 1), ("1e20", 2**63 - 1), ("16TiB", 16 << 40),
        ("1e99999999", 2**63 - 1), ("1e9999999999999999999", 2**63 - 1), ("9" * 5000, 2**63 - 1),
        # (a breaker: 1e999 read as huge while inf was refused, and -0 was "not a whole number")
        ("inf", 2**63 - 1), (" Infinity ", 2**63 - 1), ("-0", 0), ("+7", 7), ("-0 MiB", 0),
        # (a regression breaker: a zero with an exponent above 20 read as no limit; +inf was refused)
        ("0e21", 0), ("-0e30", 0), ("0.000e25", 0), ("-0e21 KiB", 0), ("0e99999999999999999999", 0),
        ("+inf", 2**63 - 1), ("+Infinity", 2**63 - 1), ("5e-1KiB", 512), ("2.5e-1 kB", 250)]
BAD = ["abc", "-5", "1.5", "0.5KiB3", "16M", "1e-3", "1__0", "0x10", "16 MiB MiB", "nan", "-inf", "1,000", "-1e999"]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_parse_bytes(text, expected):
    assert settings.parse_bytes(text) == expected
    assert settings.LIMIT == 2**63 - 1


@pytest.mark.parametrize("text", BAD)
def test_parse_bytes_refuses(text):
    with pytest.raises(ValueError, match=repr(text).replace("+", r"\+")):
        settings.parse_bytes(text)


@pytest.mark.parametrize(("text", "why"), [
    ("1.5", "'1.5' is no whole number of bytes"), ("-5", "'-5' is negative"), ("-1e999", "'-1e999' is negative"),
    ("abc", "'abc' is not a whole number of bytes"),
    # (a regression breaker) -inf and a negative exponent's number were 'not a whole number of bytes'
    ("-inf", "'-inf' is negative"), (" -Infinity", "' -Infinity' is negative"), ("-1e-5", "'-1e-5' is negative"),
    ("1e-5", "'1e-5' is no whole number of bytes"),
    ("1e-99999999999999999999", "'1e-99999999999999999999' is no whole number of bytes")])
def test_parse_bytes_refusals_give_the_forms_accepted(text, why):
    """(A breaker) the fraction's refusal lacked the forms the others give."""
    with pytest.raises(ValueError) as exc:
        settings.parse_bytes(text)
    assert str(exc.value) == (f"{why}; expected a whole number of bytes, optionally with a unit: 16777216, 1e9, "
                              "64MiB, 2 GiB, 500MB, or inf for no limit" if "not a whole" not in why else
                              f"{why}, optionally with a unit: 16777216, 1e9, 64MiB, 2 GiB, 500MB, or inf for no "
                              "limit")


def test_env_bytes(monkeypatch):
    monkeypatch.delenv("OPSNN_TEST_BYTES", raising=False)
    assert settings.env_bytes("OPSNN_TEST_BYTES", 5) == 5
    monkeypatch.setenv("OPSNN_TEST_BYTES", " ")
    assert settings.env_bytes("OPSNN_TEST_BYTES", None) is None
    monkeypatch.setenv("OPSNN_TEST_BYTES", "8MiB")
    assert settings.env_bytes("OPSNN_TEST_BYTES", 5) == 8 << 20
    monkeypatch.setenv("OPSNN_TEST_BYTES", "8 megs")
    with pytest.warns(RuntimeWarning, match=r"ignoring OPSNN_TEST_BYTES='8 megs'.*default \(5 bytes\)"):
        assert settings.env_bytes("OPSNN_TEST_BYTES", 5) == 5
    with pytest.warns(RuntimeWarning, match=r"default \(measured\)"):
        assert settings.env_bytes("OPSNN_TEST_BYTES", None) is None

