"""The stream format's own errors: a stream unreadable as a whole, a file of an unknown table, and the
Arrow errors a conversion can raise.
"""

from __future__ import annotations

import pyarrow as pa

ARROW_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


class StreamFormatError(ValueError):
    """A stream is unreadable as a whole (or a write is refused); the message names the file or table."""


class UnknownStreamTableError(StreamFormatError):
    """A stream holds a file of a table the catalog does not have (``ivm run`` hints at --catalog)."""
