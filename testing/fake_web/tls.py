"""Test certificates made with the ``openssl`` command: a throw-away authority and a server
certificate for made-up host names, as SSL contexts for a fake server and its client.

    server_tls, client_tls = make_tls(tmp_path, ["public.test"])
    with FakePageServer(tls=server_tls) as site:
        fetch(site.url_for("public.test", "/"), verify=client_tls, ...)
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Sequence
from pathlib import Path


_EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")  # fast to make


def openssl_available() -> bool:
    return shutil.which("openssl") is not None


def make_tls(folder: Path, hostnames: Sequence[str]) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context trusting only the test authority)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = folder / "ca.key", folder / "ca.pem"
    key, csr, cert = folder / "server.key", folder / "server.csr", folder / "server.pem"
    names = folder / "san.cnf"
    names.write_text("subjectAltName=" + ",".join(f"DNS:{h}" for h in hostnames) + "\n")
    _run("req", "-x509", *_EC_KEY, "-nodes", "-days", "2", "-subj",
         "/CN=hermes test authority", "-keyout", ca_key, "-out", ca_cert)
    _run("req", *_EC_KEY, "-nodes", "-subj", f"/CN={hostnames[0]}",
         "-keyout", key, "-out", csr)
    _run("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
         "-days", "2", "-extfile", names, "-out", cert)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(ca_cert))
    return server, client


def _run(*args: object) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)
