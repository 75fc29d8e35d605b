"""Secrets never reach a file or a printed line: URLs, mappings and text are masked here.

What counts as a secret: the password of a URL's user-info (any character in it, raw
``'`` ``"`` ``<`` ``>`` ``@`` ``/`` ``?`` ``#`` or a space included, or percent-encoded), a
URL query value whose name says password/secret/token (libpq's ``?password=``,
``sslpassword``, a MariaDB or Redis URL's ``?password=``; the name read percent-decoded),
and the value of any property, parameter or environment variable whose name holds
``password``, ``passwd``, ``pwd``, ``secret``, ``token`` or ``credential``.

Masking parses; it never lets a class of characters decide where a password ends:

- a URL is cut where a URL parser cuts it — the user-info runs from after ``scheme://``
  to the *last* ``@`` (a raw ``@`` of the password belongs to it; a parser that reads
  less as the password reads no more than that), a secret query value to the next ``&``
  — and each secret span is masked; where two readings of a URL differ, the union of
  their spans is masked (more hidden, never less);
- a mapping or a list (the experiment, meta.json, a notebook's parameters) is walked: a
  secret-named key's value is masked, a string value that is a URL goes whole through
  :func:`mask_url`, another has its own URLs and ``name=value`` pairs masked;
- free text (an error line, a traceback) has each ``scheme://`` read up to the next one or
  the line's end, and ``name=value`` / ``name: value`` pairs with a secret name; every
  secret masked so far in this process is also replaced wherever it stands whole in text
  (raw, percent-encoded, JSON-, repr- or HTML-escaped), so a driver's message quoting it
  is masked too.
"""
from __future__ import annotations

import html
import json
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus, unquote

MASK = "***"
SECRET_NAME = re.compile(r"pass(word|wd)?|pwd|secret|token|credential", re.IGNORECASE)
_SCHEME = re.compile(r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://", re.IGNORECASE)
# a query parameter: its name and its value, which runs to the next "&" (parse_qsl's cut)
_QUERY_PARAM = re.compile(r"[?&;]([^=&?;#]*)=([^&]*)")
_TEXT_QUERY = re.compile(r"[?&;]([^=&?;#\s]*)=([^&\s]*)")
# name=value, or "name": value (a dict's or JSON's), in free text, the name a secret's
# (not MariaDB's "using password: YES")
_TEXT_PAIR = re.compile(r"""(?P<name>[\w.\-]+)(?:\s*=|(?<=\w)["']\s*[=:])\s*""")
_PAIR_END = re.compile(r"[\s,;&)}\]]|$")
_MIN_REMEMBERED = 4     # shorter masked spans are not searched for in text (they would
_seen: set[str] = set()  # mask every "a" of a message); the secrets masked so far
_seen_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(str(name)))


def _remember(secret: str) -> None:
    """A masked value, searched for in text from now on (its decoded form too)."""
    for s in {secret, unquote(secret)}:
        if len(s) >= _MIN_REMEMBERED:
            with _seen_lock:
                _seen.add(s)


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of the (start, end) spans masked, merged where they touch."""
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        _remember(text[start:end])
        out += [text[at:start], MASK]
        at = end
    return "".join(out) + text[at:]


# in free text the user-info ends at the last "@" followed by a host (a name, an address,
# [IPv6], a port; or nothing before a path): a message's 'root'@'localhost' is not one
_HOST_AFTER = re.compile(r"@(?:(?:\[[0-9a-fA-F:.]+\]|[\w.\-%]+)(?::\d*)?(?=[/?#\s'\"<>),;]|$)|(?=/))")


def _url_spans(rest: str, text: bool = False) -> list[tuple[int, int]]:
    """The secret spans of a URL after its ``scheme://``: the user-info's password (to
    the last "@"; in ``text``, the last one before a host) and every secret-named query
    value (to the next "&"; in ``text``, or the next blank)."""
    spans = []
    if text:
        ats = [m.start() for m in _HOST_AFTER.finditer(rest)]
        at = ats[-1] if ats else -1
    else:
        at = rest.rfind("@")
    colon = rest.find(":", 0, at) if at > 0 else -1
    if colon >= 0 and not any(c in rest[:colon] for c in ("/?# \t" if text else "/?#")):
        spans.append((colon + 1, at))
    for m in (_TEXT_QUERY if text else _QUERY_PARAM).finditer(rest):
        if is_secret_name(unquote(m.group(1))):
            spans.append(m.span(2))
    return spans


def mask_url(url: str) -> str:
    """The URL with its password (user-info and query) replaced by ``***``."""
    if not isinstance(url, str) or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{_mask_spans(rest, _url_spans(rest))}"


def is_url(value: Any) -> bool:
    return isinstance(value, str) and bool(_SCHEME.match(value.strip()))


def mask_mapping(obj: Any) -> Any:
    """A copy of a nested dict/list with every secret masked: by key name, every string
    that is a URL through :func:`mask_url`, any other string as text."""
    if isinstance(obj, dict):
        return {k: (MASK if _masked_value(k, v) else mask_mapping(v)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(mask_mapping(v) for v in obj)
    if is_url(obj):
        return mask_url(obj)
    if isinstance(obj, str):   # a value of a structure: its own URLs and pairs only
        return mask_text(obj, known=False)
    return obj


def _masked_value(key: Any, value: Any) -> bool:
    if not is_secret_name(key) or not isinstance(value, (str, int, float)) or value in ("", None):
        return False
    _remember(str(value))
    return True


def _text_pairs(line: str) -> list[tuple[int, int]]:
    """The spans of values given to secret names in a line (``password=x`` to the next
    blank or separator, a quoted value to its closing quote)."""
    spans = []
    for m in _TEXT_PAIR.finditer(line):
        if not is_secret_name(m.group("name")):
            continue
        start = m.end()
        if start < len(line) and line[start] in "'\"":
            end = line.find(line[start], start + 1)
            spans.append((start + 1, len(line) if end < 0 else end))
        else:
            spans.append((start, _PAIR_END.search(line, start).start()))
    return spans


def _line_spans(line: str) -> list[tuple[int, int]]:
    """Secret spans in one line: each URL (read to the next URL or the line's end, so a
    password with a space or a quote stays inside it) and each secret-named pair."""
    spans = []
    starts = [m.start() for m in _SCHEME.finditer(line)]
    for i, s in enumerate(starts):
        head = line.index("://", s) + 3
        stop = starts[i + 1] if i + 1 < len(starts) else len(line)
        spans += [(head + a, head + b) for a, b in _url_spans(line[head:stop], text=True)]
    return spans + [s for s in _text_pairs(line) if s[1] > s[0]]


def _spellings(s: str) -> set[str]:
    """How a secret may be written in a file: raw, percent-encoded, JSON, repr, HTML."""
    return {s, quote(s, safe=""), quote(s), quote_plus(s), json.dumps(s)[1:-1],
            repr(s)[1:-1], html.escape(s), html.escape(s, quote=False)}


def _known(text: str) -> str:
    """Every secret masked so far in this process, in any of its spellings, masked where
    it stands as a whole (a password "postgres" is not masked inside "postgresql")."""
    with _seen_lock:
        seen = sorted(_seen, key=len, reverse=True)
    for s in seen:
        for form in sorted(_spellings(s), key=len, reverse=True):
            if form in text:
                text = re.sub(("(?<![A-Za-z0-9])" if form[0].isalnum() else "") + re.escape(form)
                              + ("(?![A-Za-z0-9])" if form[-1].isalnum() else ""), MASK, text)
    return text


def mask_text(text: str, known: bool = True) -> str:
    """Every secret inside a text masked (error messages quote URLs and settings); with
    ``known``, also every secret masked so far wherever the text quotes it."""
    if not isinstance(text, str):
        return text
    out = "\n".join(_mask_spans(line, _line_spans(line)) for line in text.split("\n"))
    return _known(out) if known else out


# parameters handed to a notebook kernel: papermill writes them into the executed
# notebook, so they go masked, and the masked values' real ones go through the
# kernel's environment under this name (JSON), which no file keeps
SECRETS_ENV = "BENCHLIB_NOTEBOOK_SECRETS"


def hide_secrets(params: dict) -> tuple[dict, dict]:
    """``params`` with every secret masked, and the real values of the keys that changed."""
    masked = mask_mapping(params)
    return masked, {k: v for k, v in params.items() if masked[k] != v}


def restore_secrets(params: dict, environ=None) -> dict:
    """``params`` as :func:`hide_secrets` masked them, each key whose masked value still
    stands given back its real one from :data:`SECRETS_ENV`; as they are without it."""
    import os
    raw = (os.environ if environ is None else environ).get(SECRETS_ENV)
    real = json.loads(raw) if raw else {}
    return {k: real[k] if k in real and mask_mapping({k: real[k]})[k] == v else v
            for k, v in params.items()}
