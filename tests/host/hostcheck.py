# SPDX-License-Identifier: GPL-2.0
"""What the Python host tests of magnetd's endpoint share
(tests/host/prometheus-test.py, tests/host/webconfig-test.py): the
project's "ok - ..." / "not ok - ..." lines and their tally (the format of
tests/harness.h), free loopback ports, and whether the server has ended a
connection.
"""
import socket
import sys

passed = failed = 0


def check(cond, what):
    """Print and count one check; its condition."""
    global passed, failed
    if cond:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what)
    sys.stdout.flush()
    return cond


def summary():
    """Print the tally; the exit status (1 if anything failed)."""
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def free_ports(n):
    """@n loopback TCP ports free now."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def is_open(s):
    """Whether the server has not ended connection @s (nothing to read)."""
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)
