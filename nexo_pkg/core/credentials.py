"""Credentials written into a URL are never shown: the one masking every message uses.

A token pasted with a git remote (``https://x-access-token:TOKEN@github.com/…``), a password
in a registry reference (``oci://USER:PASSWORD@HOST/…``) or in a proxy URL becomes ``***``
wherever it would be echoed: an error line, a ``--json`` document, a printed URL.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["bare_url", "masked", "without_credentials"]

# A scheme, one or two slashes (a path argument has had its `//` folded into one), then a
# user (and password) before an `@`: the part that becomes `***`.
_USER_INFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*:/{1,2})[^/@\s'\"]+@")


def bare_url(url: str) -> str:
    """``url`` without what may carry a credential: a user and password before the host
    (masked), the query string and the fragment (a presigned download URL's signature or token
    is in its query)."""
    scheme, separator, rest = url.split("#", 1)[0].split("?", 1)[0].partition("://")
    authority, slash, path = rest.partition("/")
    if separator and "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return f"{scheme}{separator}{authority}{slash}{path}"


def without_credentials(text: str) -> str:
    """``text`` (a message, an argument echoed in one) with the user and password of every URL
    in it masked: ``https://***@github.com/a/b``."""
    if "@" not in text:
        return text
    return _USER_INFO.sub(r"\g<scheme>***@", text)


def masked(value: Any) -> Any:
    """``value`` (a ``--json`` document, or any part of one) with the credentials in each of
    its texts masked (:func:`without_credentials`); other values as they are."""
    if isinstance(value, str):
        return without_credentials(value)
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [masked(item) for item in value]
    return value
