"""Operator specs. Importing this package registers every operator."""

from . import activation  # noqa: F401
