# Bidirectional bulk TCP between two harness hosts: one socket carrying both directions against two sockets,
# one per direction. It separates TCP and the tbf queue from Open MPI's transport (README.md, "Session 5").
# Usage (server first, then the client, both sides sending BYTES at once):
#   ip netns exec lltn1 python3 bidir.py one|two server 10.77.0.1 5001 BYTES &
#   ip netns exec lltn2 python3 bidir.py one|two client 10.77.0.1 5001 BYTES
import socket
import sys
import threading
import time

mode, role, host, port, nbytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
if mode not in ("one", "two") or role not in ("server", "client"):
    sys.exit("usage: bidir.py one|two server|client HOST PORT BYTES")
CHUNK = 1 << 20
payload = b"x" * CHUNK
sockets_needed = 1 if mode == "one" else 2


def send_all(sock):
    left = nbytes
    while left > 0:
        left -= sock.send(payload[:min(CHUNK, left)])


def receive_all(sock, finished):
    left = nbytes
    while left > 0:
        data = sock.recv(min(CHUNK, left))
        if not data:
            sys.exit("bidir.py: the peer closed the connection early")
        left -= len(data)
    finished.append(time.time())


def connect():
    if role == "server":
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(sockets_needed)
        return [listener.accept()[0] for _ in range(sockets_needed)]
    conns = []
    for _ in range(sockets_needed):
        for _attempt in range(100):  # the server may not listen yet
            try:
                conns.append(socket.create_connection((host, port)))
                break
            except OSError:
                time.sleep(0.05)
        else:
            sys.exit(f"bidir.py: cannot connect to {host}:{port}")
    return conns


conns = connect()
conns[0].sendall(b"g")  # both sides start together
conns[0].recv(1)
start, finished = time.time(), []
if mode == "one":
    outgoing = incoming = conns[0]
else:  # the server sends on the first connection, the client on the second
    outgoing, incoming = (conns[0], conns[1]) if role == "server" else (conns[1], conns[0])
reader = threading.Thread(target=receive_all, args=(incoming, finished))
reader.start()
send_all(outgoing)
reader.join()
seconds = finished[0] - start
print(f"{role} {mode}: received {nbytes / 1e6:.0f} MB in {seconds:.2f} s = {nbytes * 8 / seconds / 1e9:.3f} Gbit/s")
