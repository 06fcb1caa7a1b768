"""Operator specs. Importing this package registers every operator."""

from . import activation  # noqa: F401
from . import activation_forward  # noqa: F401
