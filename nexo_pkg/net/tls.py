"""The TLS context every https connection of the one HTTP client verifies with.

The operating system's trust store (``truststore``: the macOS keychain, Windows' certificate
store, the distribution's CA directory on Linux), as pip uses it when ``pack`` vendors: a
corporate CA the OS trusts is trusted by ``install``, ``lock`` and ``sync`` as well.
``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` still name the CA certificates instead when set (as
httpx, requests and OpenSSL read them). CA settings that name no usable certificates are a
``config`` error.
"""

from __future__ import annotations

import os
import ssl
import stat
from pathlib import Path

from nexo_pkg.core.errors import ConfigError


def tls_context() -> ssl.SSLContext:
    """A client context verifying certificates and host names (HTTP/1.1 offered by ALPN);
    raises ``ConfigError`` when ``SSL_CERT_FILE``/``SSL_CERT_DIR`` name no usable
    certificates."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = os.environ.get("SSL_CERT_DIR") or None
    if cafile is not None:
        # OpenSSL opens and reads it as it is: a FIFO would hang the command, a device
        # (/dev/zero) be read without end.
        try:
            regular = stat.S_ISREG(Path(cafile).stat().st_mode)
        except (OSError, ValueError):
            regular = True  # OpenSSL says why it cannot open it, below
        if not regular:
            raise ConfigError(
                f"SSL_CERT_FILE={cafile} is not a regular file of CA certificates; fix it, "
                "or unset SSL_CERT_FILE"
            )
    if capath is not None and cafile is None:
        # OpenSSL takes a directory it cannot read for one without certificates, silently:
        # every https request would then fail to verify, a network error instead of this.
        try:
            with os.scandir(capath) as entries:
                holds = any(entries)
        except OSError as exc:
            raise ConfigError(
                f"SSL_CERT_DIR={capath} cannot be read as a directory of CA certificates "
                f"({exc.strerror or exc}); fix it, or unset SSL_CERT_DIR"
            ) from exc
        if not holds:
            raise ConfigError(
                f"SSL_CERT_DIR={capath} holds no CA certificates; fix it, or unset SSL_CERT_DIR"
            )
    try:
        if cafile is not None or capath is not None:
            context = ssl.create_default_context(cafile=cafile, capath=capath)
        else:
            import truststore  # noqa: PLC0415 (only https pays for it)

            context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    except (OSError, ssl.SSLError) as exc:  # ssl.SSLError is an OSError too
        reason = exc.strerror if type(exc) is not ssl.SSLError and exc.strerror else exc
        raise ConfigError(
            "cannot load the CA certificates to verify https (check SSL_CERT_FILE "
            f"and SSL_CERT_DIR): {reason}"
        ) from exc
    context.set_alpn_protocols(["http/1.1"])
    return context
