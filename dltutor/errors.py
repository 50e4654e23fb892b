"""Error classes the whole kit shares.

>>> raise MessageKeyError("no parameter 'x'; the model has: 'w', 'b'")
Traceback (most recent call last):
    ...
dltutor.errors.MessageKeyError: no parameter 'x'; the model has: 'w', 'b'
"""
from __future__ import annotations


class MessageKeyError(KeyError):
    """A KeyError whose message prints as written.

    A plain KeyError prints its argument with ``repr``: in quotes, with ``\\n`` instead of line
    breaks. The kit's key errors explain what went wrong over several lines, so they subclass
    this instead.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
