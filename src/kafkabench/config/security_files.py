"""What a truststore or keystore file holds, looked at when settings are translated: a client handed a file
it cannot read fails at connect time, far from the setting that named it; here it is one line before
anything runs.

Java's store type defaults to JKS, but a `.pem` given without `ssl.truststore.type` is what the user
meant by it: the file's own bytes say which it is (PEM text, the JKS magic number, or DER, i.e. PKCS12).
"""

from __future__ import annotations

import re
import ssl
import textwrap

from kafkabench.errors import ConfigError

PEM = "PEM"
JKS = "JKS"
PKCS12 = "PKCS12"

_READ_LIMIT = 1 << 20  # a store is a few KiB; enough to tell and to check a PEM file
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


def sniff(key: str, path: str) -> tuple[str, str | None]:
    """(the store type the file's bytes show, its text if PEM); a ConfigError if it cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(_READ_LIMIT)
    except FileNotFoundError:
        raise ConfigError(f"{key} {path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{key} {path}: a directory; a file is expected") from None
    except OSError as exc:
        raise ConfigError(f"{key} {path}: cannot be read ({exc.strerror or exc})") from None
    if b"-----BEGIN " in head:  # text before the first block is allowed (openssl's "Bag Attributes")
        return PEM, head.decode("ascii", errors="replace")
    if head.startswith(_JKS_MAGIC):
        return JKS, None
    if head[:1] == b"\x30":  # an ASN.1 SEQUENCE: PKCS12 is DER
        return PKCS12, None
    return JKS, None  # Java's default; only the Java client will try it


def blocks(text: str) -> list[str]:
    """The kinds of PEM block in a text: CERTIFICATE, PRIVATE KEY, ENCRYPTED PRIVATE KEY, RSA PRIVATE KEY..."""
    return [match[1] for match in _BLOCK.finditer(text)]


def normalized(text: str) -> str:
    """PEM as OpenSSL reads it. Java's parser takes a PEM value flattened onto one line (as a .properties
    file joins continued lines); librdkafka's `ssl.*.pem` and Python's `cadata` need the 64-column lines back."""
    out = []
    for match in _BLOCK.finditer(text):
        body = match[2]
        if ":" in body:  # RFC 1421 headers (Proc-Type, DEK-Info): leave the block as written
            out.append(match[0])
            continue
        lines = textwrap.wrap(re.sub(r"\s+", "", body), 64)
        out.append("\n".join([f"-----BEGIN {match[1]}-----", *lines, f"-----END {match[1]}-----"]))
    return "\n".join(out) + "\n"


def check_pem_key(key: str, text: str, has_key_password: bool, *, need_certificate: bool) -> None:
    """What the Java client refuses in a PEM key, refused for every client so one file works for all: exactly
    one PKCS#8 key (`BEGIN PRIVATE KEY`, or `BEGIN ENCRYPTED PRIVATE KEY` with ssl.key.password)."""
    kinds = blocks(text)
    keys = [kind for kind in kinds if kind.endswith("PRIVATE KEY")]
    if len(keys) != 1:
        raise ConfigError(f"{key}: expected one PEM private key, found {len(keys)}")
    if keys[0] not in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        raise ConfigError(f"{key}: the key is in a BEGIN {keys[0]} block; the Java client reads only PKCS#8 keys "
                          f"(convert with `openssl pkcs8 -topk8`)")
    if (keys[0] == "ENCRYPTED PRIVATE KEY") != has_key_password:
        why = ("is not encrypted but ssl.key.password is set (the Java client then fails to decrypt it)"
               if has_key_password else "is encrypted but ssl.key.password is not set")
        raise ConfigError(f"{key}: the private key {why}")
    if need_certificate and "CERTIFICATE" not in kinds:
        raise ConfigError(f"{key}: no PEM certificate next to the private key")


def check_pem_certificates(key: str, text: str) -> None:
    if "CERTIFICATE" not in blocks(text):
        raise ConfigError(f"{key}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it")


def check_opens(key: str, *, cafile: str | None = None, cadata: str | None = None, chain_file: str | None = None,
                password: str | None = None) -> None:
    """Have OpenSSL (through Python's ssl, as kafka-python and aiokafka will) load the CA or the key and chain,
    so a wrong ssl.key.password or a damaged file is refused now for every client, not at the first connect."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        if cafile is not None or cadata is not None:
            context.load_verify_locations(cafile=cafile, cadata=cadata)
        if chain_file is not None:
            context.load_cert_chain(chain_file, chain_file, password=password or "")  # "" never prompts
    except (ssl.SSLError, ValueError) as exc:
        what = "the key cannot be opened (is ssl.key.password right?)" if chain_file else "the certificates cannot be loaded"
        raise ConfigError(f"{key}: {what}: {exc.args[-1] if exc.args else exc}") from None
