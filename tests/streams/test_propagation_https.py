"""Issue 14 §1 "HTTP … TLS when https": propagation to a ``sluice serve --ssl-certfile …
--ssl-keyfile …`` on loopback, its certificate signed by a CA made here and trusted by
the sending site through ``SLUICE_SSL_CA_FILE`` (seed 004 "Using HTTP and HTTPS for
Oracle Streams AQ Propagation")."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.sites import CA_FILE_ENV

from ..idap.conftest import SLUICE, CliServer
from .propkit import Sites, drain, enqueue, multi_queue, rows
from .test_propagation_http import DESTINATION_SETUP, SERVLET


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_pki(tmp_path):
    """A CA and a certificate it signed for 127.0.0.1: ``(ca.pem, server.pem, server.key)``."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Sluice test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       key_cert_sign=True, crl_sign=True, encipher_only=False,
                                       decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(_pem_key(key))
    return tuple(str(p) for p in paths)


@pytest.fixture
def https_site(dsn, tmp_path):
    """``(source connection, destination connection, CA file)``: the destination behind
    ``sluice serve`` over HTTPS, the source with a link to it and a propagation."""
    sites = Sites(dsn, tmp_path)
    ca, cert, key = make_pki(tmp_path)
    b = sites.open("dbs2")
    b.cursor().executescript(DESTINATION_SETUP.format(q="dst"))
    server = CliServer(sites.dsn_of("dbs2"), "--ssl-certfile", cert, "--ssl-keyfile", key, ca_file=ca)
    try:
        a = sites.open("dbs1")
        multi_queue(a, "SRC")
        a.cursor().execute(f"CREATE DATABASE LINK dbs2 CONNECT TO john IDENTIFIED BY welcome "
                           f"USING '{server.url}{SERVLET}'")
        a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2")
        yield a, b, ca
    finally:
        server.kill()
        sites.close()


def test_propagation_over_https_with_the_ca_file_trusted(https_site, monkeypatch):
    a, b, ca = https_site
    monkeypatch.setenv(CA_FILE_ENV, ca)
    sent = [b"tls%02d" % i for i in range(12)]
    enqueue(a, "SRC", sent)
    assert PropagationRunner(a, batch_size=5).run_once(force=True) == 12
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == sent
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(12, 0)]


def test_an_untrusted_certificate_is_recorded_and_nothing_leaves(https_site, monkeypatch):
    a, b, _ = https_site
    monkeypatch.delenv(CA_FILE_ENV, raising=False)      # the system's CA store: it does not know ours
    enqueue(a, "SRC", [b"secret"])
    assert PropagationRunner(a).run_once(force=True) == 0
    [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert failures == 1 and error.startswith("ORA-29024"), error
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(1,)]
    assert drain(b, "STRM.DST", "APP") == []


def test_an_unreadable_ca_file_is_recorded(https_site, monkeypatch, tmp_path):
    a, _, _ = https_site
    monkeypatch.setenv(CA_FILE_ENV, str(tmp_path / "missing.pem"))
    enqueue(a, "SRC", [b"x"])
    PropagationRunner(a).run_once(force=True)
    [(error,)] = rows(a, "SELECT LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert error.startswith("ORA-29024") and "missing.pem" in error


def test_serve_refuses_a_key_that_is_not_the_certificates(tmp_path):
    _, cert, _ = make_pki(tmp_path)
    other = tmp_path / "other.key"
    other.write_bytes(_pem_key(ec.generate_private_key(ec.SECP256R1())))
    done = subprocess.run([str(SLUICE), "--dsn", f"sqlite:///{tmp_path / 's.db'}", "serve", "--port", "0",
                           "--ssl-certfile", cert, "--ssl-keyfile", str(other)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "ORA-29024" in done.stdout + done.stderr
