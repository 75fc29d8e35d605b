"""Secrets never reach a file or a printed line: URLs and values are masked here."""
from __future__ import annotations

import re


def mask_url(url: str) -> str:
    """The URL with its password replaced by ***: credentials never reach a report."""
    # the user may be empty, as Redis URLs have it (redis://:secret@host)
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
