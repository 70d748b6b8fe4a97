"""Real parts for the publishing tests: the product's Mosquitto launcher and subscriber, a TCP proxy
that can cut the link, and config files."""
from __future__ import annotations

import socket
import threading
from pathlib import Path

from firmware_host.mqtt import subscriber
from firmware_host.sim.broker import LocalMosquitto as Broker
from firmware_host.sim.broker import free_port

__all__ = ["KEY", "MOSQUITTO_DIR", "Broker", "Proxy", "Subscriber", "dedupe", "free_port", "make_certificates",
           "shipped_broker", "user", "write_config"]

REPO = Path(__file__).resolve().parents[1]
MOSQUITTO_DIR = REPO / "hardware" / "mosquitto"
KEY = "test-key-0123456789abcdef"


def shipped_broker(directory: Path, port: int | None = None) -> Broker:
    """Mosquitto running the shipped config, ACL and password file (``hardware/mosquitto/``) on loopback."""
    return Broker(directory, port=port, config=MOSQUITTO_DIR / "mosquitto.conf.example",
                  acl_file=MOSQUITTO_DIR / "acl.example", password_file=MOSQUITTO_DIR / "passwd.example")


def user(name: str) -> dict:
    """The credentials of the shipped example account *name* (its password is ``example-<name>``)."""
    return {"username": name, "password": f"example-{name}"}


class Subscriber(subscriber.Subscriber):
    """The product's subscriber; ``on(topic)`` is its ``payloads(topic)``."""

    def on(self, topic: str) -> list:
        return self.payloads(topic)


class Proxy:
    """A TCP proxy 127.0.0.1:<port> -> target. :meth:`cut` drops every connection and refuses new ones."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        self._up = True
        self._closed = False
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self._up:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=2)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
                self.connections += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        """The link goes down: connections dropped, new ones refused."""
        self._up = False
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def restore(self) -> None:
        self._up = True

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._server.close()


def dedupe(payloads: list[dict]) -> list[dict]:
    """The payloads with duplicates (same id) dropped, first copy kept."""
    seen, out = set(), []
    for p in payloads:
        if p["id"] not in seen:
            seen.add(p["id"])
            out.append(p)
    return out


def write_config(directory: Path, port: int, *, table: str = "t1", username: str | None = None,
                 password: str | None = None, delay: float = 0.0, max_bytes: int = 50_000_000,
                 health: float = 1.0, keepalive: int = 2, extra: str = "", broker_extra: str = "") -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    creds = f'username = "{username}"\npassword = "{password}"\n' if username else ""
    text = f"""[table]
id = "{table}"
profile = "000"
hardware = {{ shoe = "replay", readers = 0 }}

[broker]
host = "127.0.0.1"
port = {port}
keepalive = {keepalive}
reconnect_min = 0.1
reconnect_max = 1.0
{creds}{broker_extra}
[outbox]
path = "outbox.sqlite"
max_bytes = {max_bytes}

[journal]
path = "journal.sqlite"

[publish]
broadcast_delay = {delay}
health_interval = {health}

[commands]
key = "{KEY}"
window = 30
{extra}"""
    path = directory / "table.toml"
    path.write_text(text)
    return path


# A test-only CA and a broker certificate for 127.0.0.1 (valid until 2126), made once with openssl so the
# tests need no openssl binary. Never use them for anything else.
TEST_CA = """-----BEGIN CERTIFICATE-----
MIIDGzCCAgOgAwIBAgIUGaSPjWCDhmZTW2h8/tdbBGN51LMwDQYJKoZIhvcNAQEL
BQAwHDEaMBgGA1UEAwwRcG9rZXJoYWxsLXRlc3QtY2EwIBcNMjYxMTIzMTMyMjA4
WhgPMjEyNjEwMzAxMzIyMDhaMBwxGjAYBgNVBAMMEXBva2VyaGFsbC10ZXN0LWNh
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsR8OB3KtLPRdcZkbzJG0
GqlVrOGdGF2OJkoo7MW+gGFRozrCm973UZduR7hVQc2+TcrWtKXFjectahR2NFt1
6S2pGvAq1oLM7rNcNhUvaArCsjVUHfAuqWZaMGz7pjIdP82PQJ504dVdkA/2L981
Rgm0LSFZDJ4fbVKouDtAN48OvlDPm16M8AKXzQOZAaKJNzLdp6M3E8UlB3I9QD85
rf6JkygS4sOIc05a+rYr4mn/8pajHsV1H7bmc5AhykzVAhrvsJXx2dQQmfQd3a78
y+bPX9q1dppmUh1LFX2JQHLs0KTL/g2rxc6glE+7OcX4DDs3TjNaEUkeGQojdW9A
KwIDAQABo1MwUTAdBgNVHQ4EFgQUWRpFZlWdFABai6xBlt2AC1UuIs0wHwYDVR0j
BBgwFoAUWRpFZlWdFABai6xBlt2AC1UuIs0wDwYDVR0TAQH/BAUwAwEB/zANBgkq
hkiG9w0BAQsFAAOCAQEAmkApFY9pgdT9cNejruoPgLYrKSAZuAWD/jNoa93Vqa0P
m53rRNQY27wK9r0xPk4eZ4eOS/Joea8A0GjXIu9dCuJiirD5OovLAAfzOaJBevKD
lycbB4Tb0cBHwTMbP4/zxmGmNJ0YGiF6dW7Yy/PXJnZKbqujOPHz0P/SW4Umq7Zi
/iMRtIsmX0g32CFdQOYdCbZYx4+oA02VT6g0V41yzwp+tNcijRwPvnUUydPv+3Jh
Q/Cl7WiYn3nalVYAax9vd7Xw6wbdB9+3c0nEiM30n2QzIklw5aiJrh7Oo4cSsqh5
pWEi2sh1wEriGkP+8EkB2tH11E42QdIlCRUVXtdNTA==
-----END CERTIFICATE-----
"""
TEST_BROKER_CERT = """-----BEGIN CERTIFICATE-----
MIIDHjCCAgagAwIBAgIURRoAKWhlwxtFGkAv3eFfA7rLe7AwDQYJKoZIhvcNAQEL
BQAwHDEaMBgGA1UEAwwRcG9rZXJoYWxsLXRlc3QtY2EwIBcNMjYxMTIzMTMyMjA5
WhgPMjEyNjEwMzAxMzIyMDlaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTCCASIwDQYJ
KoZIhvcNAQEBBQADggEPADCCAQoCggEBAJrvVdQrSxvpbFiEPBWA1UEM6r9sgMWU
7UMtBFLDpvj2zd/s9yHkNCQIGXL23zUoR8FqKdQVzIYgynyZ1yvsTumz17Shbfx2
1Jw6XYoPhe+6gUuC3IjgnnYjDlShucFOJj5D4fhDIs+v+n1qjy1qkULQs0AhSBUp
9FBvd+0+s5iBaIl9Zgf5EztJ2CbWe+95YqlsTs3ibog9QGPQZLaT0tAdL0CC2AvT
jOzVFqmX+IU/kyhTyeIv4t1KmcnpIcwUToW9Zfin09G5WPg3vFX4HZDpp2UTi+K3
AQLlhgQTagXCg14UoAAwZGy5xnw7Ap5mpzuANw2eVoXuUbHPoTH+D+UCAwEAAaNe
MFwwGgYDVR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MB0GA1UdDgQWBBREux8RhA6X
mS0n3Wzrg+4c+RX8wTAfBgNVHSMEGDAWgBRZGkVmVZ0UAFqLrEGW3YALVS4izTAN
BgkqhkiG9w0BAQsFAAOCAQEAfj4VJrNEKbEKjyrGbOoWeV3JKuXLjp9Xw9M355Ca
5LSw2MUZ6/u+Xrd6156s1m7UU/0/jOvvPt6GnXavyC32yz6nbH0KUwFimJE9C5hw
/IFhJDwXHKbvAx876lTsUsXT05to1/vxn32MNt+x2OTvqlJMCvW0mxH71KjC9msG
SG9gnCRLw1BdMIhwxxDWBBvGPqYp9+VjpIhZ0jXQ74R2n2YjVcHf68w34t3mhpIj
BtSA7AIDl4uZ8vjT9cH1/R/yQD2nkZhSNzYvNaqUElIUigMmgKvOvZS4vYQV1Elv
A6PboEClniAkAQXZJLXpy3HreLPKFjwGlP8mUbpOwA+J5A==
-----END CERTIFICATE-----
"""
TEST_BROKER_KEY = """-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCa71XUK0sb6WxY
hDwVgNVBDOq/bIDFlO1DLQRSw6b49s3f7Pch5DQkCBly9t81KEfBainUFcyGIMp8
mdcr7E7ps9e0oW38dtScOl2KD4XvuoFLgtyI4J52Iw5UobnBTiY+Q+H4QyLPr/p9
ao8tapFC0LNAIUgVKfRQb3ftPrOYgWiJfWYH+RM7Sdgm1nvveWKpbE7N4m6IPUBj
0GS2k9LQHS9AgtgL04zs1Rapl/iFP5MoU8niL+LdSpnJ6SHMFE6FvWX4p9PRuVj4
N7xV+B2Q6adlE4vitwEC5YYEE2oFwoNeFKAAMGRsucZ8OwKeZqc7gDcNnlaF7lGx
z6Ex/g/lAgMBAAECggEADGJrBKo6QdP92Fx861twkGzT0Ih/3utJhN1daK/hfKnz
vmgUFWDcUcYA927S3Dj+SrBYVsQwT0dh5XsBl1iiB9hw5VbNsnNy3r25ROQlQ1/v
3lqVPhlgU+v3ml28D1QrxpM0BfLN3qE/31Rhd1Klo7GIJoKSibiLDNPq15YJEpH5
CQH3H2rlDUJc3q/QAn9CvkVdtZDPxgzUnuN6NBoZUefA7ytb0RWpoCe3RRgj8dbL
84Br8i2SUfqsg0TnxVfSulIvBEaAVpo7eV0c7g2n1SMr9/+Z+Uh7Y3xTUA1YN5Tj
wYuhrfrLq+DzTbiSRUmM/PQI9ZtBtmXDwdOFML+z6QKBgQDHLjbPey4qQnIxLwA5
8FYS1Ru3HC6O+0FGXIgx9T87ZbB5GBo4X+KeWox9UhOulnNXdoF7oKnDdcF8TDe5
Tn/MkZ26iyWhqtsQ68mReJWpFLCgkpVNrYWwAMBPzAGvccRa3+44YF+Dp2s+0wOB
VnFpOkJBJIGwY3M8rctIfo4F2QKBgQDHIfH4dYGObIvJRWoWLeho7PnGb5Ic+gQs
kmWTZGewxiaTyGi9CTo4RxEiGb9ow/tGZPZP1twxG8g2aZeBjlEipDM3eUbbMrQB
uPm8pIOfKU4zpXphM/on/1Im4FbQtO7RQx5iK4gAAmPdO6b/htXqnX0ea2JHVtT5
xn+uSNIW7QKBgQCTa3cR1b/zcz6FfJ4UQ/fQ9H4Q5wDmvrwvUalUIIpucfNNjTNK
6l0WizpUPv1mSOCRqZpoYB+GFY/haaAMvTcFt/kf6oEtyQFe4sVLsA5FGJUqI5Px
7C54d/XemcXdjryf7gGpJFtNXAqacx+zCMHj+kSzZku+u7y8+nzs6Q5A8QKBgH4O
qA2/3R7a6fakwY5+y0Q417ldgaJkRuYsWq7efaFzHpKo6FzajYd4vYjXwcrBXbzn
RuGtw0A3NRv05hr2i7ghN+bjGA7E3xzECxv3DPdhf4bEN193NuHBCDFiDLMcBp5k
HcTJh9Nxr+Qp0gKqSZq2zbDHC7TbbAEePk+G+6/VAoGAEKMAORpBpaPWSs6iU6aE
dNWtE/ER3UcfpFWqOJ0N3as1xqUaVpiposBFBTzexG2VEDRnzCJ6gIXO9CkriEsO
/HaJOIqyF1fupYLWDHNJ9Wc1c/YXnpLbg3+dLBfr9QzXcJvyZzfvarbTy2KlYhA1
xRQfafbfHfE9LgVcgY47Q1c=
-----END PRIVATE KEY-----
"""


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """The test CA and broker certificate and key, written to *directory*: (ca, cert, key)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = directory / "ca.crt", directory / "broker.crt", directory / "broker.key"
    for path, text in zip(paths, (TEST_CA, TEST_BROKER_CERT, TEST_BROKER_KEY)):
        path.write_text(text)
    paths[2].chmod(0o600)
    return paths
