#!/usr/bin/env python3
"""Checks that slow clients cannot starve an HTTP server of pgjq (`pgjq web`, `pgjq metrics --listen`).

Usage: slow_clients.py BASE_URL COUNT TOKEN [PATH]
Opens COUNT connections that send a request one byte a second (never finishing it in time) and one that
connects and then sends nothing; then the token-holder's request for PATH (default /api/overview) must be
answered, and the silent connection must have been closed by the server. Exits 1 with a reason otherwise.
"""
import socket
import sys
import threading
import time
import urllib.request

base, count, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
path = sys.argv[4] if len(sys.argv) > 4 else "/api/overview"
host, port = base.split("//", 1)[1].rsplit(":", 1)
port = int(port)
stop = threading.Event()


def trickle():
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nX-Padding: {'a' * 4000}\r\n\r\n".encode()
    try:
        with socket.create_connection((host, port), timeout=30) as s:
            for byte in request:
                if stop.wait(1):
                    return
                s.sendall(bytes([byte]))
    except OSError:
        pass  # closed by the server: what a server should do with a client this slow, eventually


threads = [threading.Thread(target=trickle, daemon=True) for _ in range(count)]
for t in threads:
    t.start()
silent = socket.create_connection((host, port), timeout=30)
time.sleep(3)  # every slow client is connected and has started its request

started = time.monotonic()
request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
try:
    with urllib.request.urlopen(request, timeout=20) as response:
        status = response.status
except Exception as e:  # noqa: BLE001 - any failure is the finding
    stop.set()
    sys.exit(f"the token-holder's request beside {count} slow clients failed: {e!r}")
waited = time.monotonic() - started
print(f"token-holder answered {status} after {waited:.2f} s beside {count} slow clients")

# The silent connection: the server closes it (recv returns b"" or the connection resets) well before 30 s.
silent.settimeout(30)
try:
    closed = silent.recv(1) == b""
except ConnectionResetError:
    closed = True
except socket.timeout:
    closed = False
stop.set()
if not closed:
    sys.exit("a connection that sent nothing for 30 s was still open")
print("a connection that sent nothing was closed by the server")
sys.exit(0 if status == 200 else f"the token-holder's request answered {status}")
