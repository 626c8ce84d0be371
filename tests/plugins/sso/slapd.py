"""Debian's slapd (OpenLDAP) run for a test in a temporary directory: a base DN with people and groups,
plain LDAP with StartTLS, and LDAPS on a second port, on a self-signed certificate the fixture makes."""
from __future__ import annotations

import datetime as dt
import ipaddress
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.serving import free_port, stop_process

SLAPD = shutil.which("slapd") or ("/usr/sbin/slapd" if Path("/usr/sbin/slapd").exists() else None)
SCHEMAS = Path("/etc/ldap/schema")
MODULES = Path("/usr/lib/ldap")
BASE = "dc=example,dc=com"
ADMIN_DN = f"cn=admin,{BASE}"
ADMIN_PASSWORD = "slapd-admin-secret"
USERS = f"ou=people,{BASE}"
GROUPS = f"ou=groups,{BASE}"


@dataclass
class Slapd:
    port: int
    ldaps_port: int
    cert: Path
    process: subprocess.Popen

    def stop(self) -> None:
        stop_process(self.process)


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def start(folder: Path) -> Slapd:
    """slapd on a free port of 127.0.0.1, filled with the entries of `populate`."""
    data = folder / "data"
    data.mkdir(parents=True)
    cert, key = _certificate(folder)
    config = folder / "slapd.conf"
    schemas = "\n".join(f"include {SCHEMAS / name}.schema" for name in ("core", "cosine", "nis", "inetorgperson"))
    config.write_text(f"""{schemas}
modulepath {MODULES}
moduleload back_mdb
pidfile {folder / 'slapd.pid'}
TLSCertificateFile {cert}
TLSCertificateKeyFile {key}
database mdb
maxsize 10485760
suffix "{BASE}"
rootdn "{ADMIN_DN}"
rootpw {ADMIN_PASSWORD}
directory {data}
access to attrs=userPassword by anonymous auth by * none
access to * by * read
""")
    port, ldaps_port = free_port(), free_port()
    urls = f"ldap://127.0.0.1:{port}/ ldaps://127.0.0.1:{ldaps_port}/"
    process = subprocess.Popen([SLAPD, "-f", str(config), "-h", urls, "-d", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"slapd did not start: {process.stderr.read().decode(errors='replace')[-2000:]}")
            time.sleep(0.1)
    server = Slapd(port, ldaps_port, cert, process)
    try:
        populate(port)
    except Exception:
        server.stop()
        raise
    return server


def populate(port: int) -> None:
    import ldap3

    conn = ldap3.Connection(ldap3.Server("127.0.0.1", port=port), ADMIN_DN, ADMIN_PASSWORD, auto_bind=True)
    conn.add(BASE, ["dcObject", "organization"], {"o": "Example", "dc": "example"})
    conn.add(USERS, "organizationalUnit", {"ou": "people"})
    conn.add(GROUPS, "organizationalUnit", {"ou": "groups"})
    add_person(conn, "jdoe", "Jane", "Doe", "jane.doe@example.com", "jane-ldap-pass",
               extra={"title": "Analyst", "departmentNumber": "42"})
    add_person(conn, "rsmith", "Rob", "Smith", "rob.smith@example.com", "rob-ldap-pass")
    # A login whose characters are filter syntax: only an exact, escaped match may find it.
    add_person(conn, "star*", "Star", "Name", "star@example.com", "star-ldap-pass")
    conn.add(f"cn=analysts,{GROUPS}", "groupOfNames", {"cn": "analysts", "member": [f"uid=jdoe,{USERS}"]})
    conn.add(f"cn=finance,{GROUPS}", "groupOfNames", {"cn": "finance", "member": [f"uid=jdoe,{USERS}"]})
    assert conn.result["result"] == 0, conn.result
    conn.unbind()


def add_person(conn, uid: str, first: str, last: str, mail: str, password: str, extra: dict | None = None) -> None:
    from ldap3.utils.dn import escape_rdn

    conn.add(f"uid={escape_rdn(uid)},{USERS}", "inetOrgPerson",
             {"uid": uid, "givenName": first, "sn": last, "cn": f"{first} {last}", "mail": mail,
              "userPassword": password, **(extra or {})})
    assert conn.result["result"] == 0, conn.result
