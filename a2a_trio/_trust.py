"""What a2a_trio's own HTTPS connections trust, and how a refused TLS handshake is told.

The client's HTTP clients and the push sender's webhook connections verify servers against
httpx's defaults: certifi's bundle, or the PEM file ``SSL_CERT_FILE`` names, or the directory
``SSL_CERT_DIR`` names (how a private CA is trusted).  Loading a bundle takes tens of
milliseconds of CPU, more on a loaded machine, with the whole trio run standing still, so it
is loaded in a worker thread, once per process for what those variables say, and shared: a
context is safe to share.
"""

from __future__ import annotations

import os
import re
import ssl
from typing import Final

import httpx
import trio

from ._causes import causes
from .errors import TrustStoreError

PRIVATE_CA_HINT: Final = "if its CA is a private one, set SSL_CERT_FILE to a PEM file holding it"
UNKNOWN_ISSUER: Final = frozenset({18, 19, 20})
"""OpenSSL's verify codes for a self-signed certificate, one in the chain, and an issuer not
among the trusted CAs: what a certificate from a private CA gets."""


_loaded: dict[tuple[str | None, str | None], ssl.SSLContext] = {}
"""The contexts loaded so far, by the ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` they were loaded
for."""


async def trusted_context() -> ssl.SSLContext:
    """A TLS context verifying servers against the CAs the environment names (see the module
    docstring): loaded in a worker thread the first time the environment names them.

    Raises:
        TrustStoreError: ``SSL_CERT_FILE`` names no readable file of CA certificates.
    """
    named = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _loaded.get(named)
    if context is None:
        context = _loaded[named] = await trio.to_thread.run_sync(_load)
    return context


def _load() -> ssl.SSLContext:
    try:
        return httpx.create_ssl_context()
    except OSError as exc:  # ssl.SSLError is one: a file of something else
        reason = _without_location(exc.strerror or str(exc))
        named = os.environ.get("SSL_CERT_FILE")
        if not named:  # only a broken certifi install gets here
            raise TrustStoreError(
                f"certifi's CA bundle cannot be loaded ({reason}): reinstall certifi"
            ) from None
        raise TrustStoreError(
            f"SSL_CERT_FILE={named!r} cannot be loaded as CA certificates ({reason}): name a PEM"
            " file of the CAs to trust, or unset it to trust certifi's bundle"
        ) from None


def tls_refusal(error: BaseException) -> ssl.SSLError | None:
    """The TLS error behind ``error``, if a TLS handshake is why it failed (httpx and
    httpcore raise a bare ``ConnectError`` over it, several causes down)."""
    return next((cause for cause in causes(error) if isinstance(cause, ssl.SSLError)), None)


def tls_failure(error: ssl.SSLError) -> str:
    """``error`` in words, with what to do where that is known."""
    text = _without_location(str(error))
    if error.reason == "WRONG_VERSION_NUMBER":
        return f"TLS handshake failed: {text} (is it a plain http:// server?)"
    if isinstance(error, ssl.SSLCertVerificationError) and error.verify_code in UNKNOWN_ISSUER:
        return f"TLS handshake failed: {text} ({PRIVATE_CA_HINT})"
    return f"TLS handshake failed: {text}"


def _without_location(text: str) -> str:
    """OpenSSL's message without the line of Python's source that raised it."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", text)
