"""Two kinds of failure: ``InputError`` (the user can fix it; pages show its message) and everything else (a bug).

Pages catch ``InputError`` and show ``str(err)`` with ``st.error``; any other exception is logged and reported as an
internal error without a traceback (``client.showErrorDetails = "none"``).
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input, with a message that says what to change (e.g. "The image is 30000x30000 pixels; the limit is
    40 megapixels. Resize it and upload again.")."""


class JobCancelled(RuntimeError):
    """A long job was cancelled by the user (cancel button) or ran past its time cap."""
