"""A TCP proxy that adds network latency: every byte crosses it ``one_way_ms`` later, in each
direction, so a request and its answer take one round trip of ``2 * one_way_ms`` more.

Bytes are forwarded as they arrive, each piece held back until its time (the link's bandwidth
stays loopback's; only its delay changes), with a TCP connection's setup paying the round trip
too (the upstream connection is opened when the first bytes are due). It runs in its own
process (asyncio, one event loop), so the proxy's work never competes with the measured
command's interpreter.

Use from a benchmark::

    with latency_proxy("127.0.0.1:5000", one_way_ms=20) as address:
        ...  # talk to address ("127.0.0.1:PORT") instead of the registry

or on its own: ``python benchmarks/fleet_proxy.py 127.0.0.1:5000 20`` (prints its address).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PIECE = 256 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``reader`` to ``writer``, each piece ``delay`` seconds after it was read."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def pump() -> None:
        while True:
            try:
                data = await reader.read(PIECE)
            except ConnectionError:
                data = b""
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                return

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                with contextlib.suppress(OSError, RuntimeError):
                    writer.write_eof()
                return
            writer.write(data)
            try:
                await writer.drain()
            except ConnectionError:
                return

    await asyncio.gather(pump(), deliver())


async def _serve(target_host: str, target_port: int, delay: float, ready: socket.socket) -> None:
    async def handle(
        client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        # asyncio turns Nagle's algorithm off only for sockets made with IPPROTO_TCP, which
        # the listener's are not: without this, a second piece (the body after the headers)
        # waited for the client's delayed ACK of the first, 40 ms, on top of the latency.
        accepted = client_writer.get_extra_info("socket")
        if accepted is not None:
            with contextlib.suppress(OSError):
                accepted.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The SYN reaches the server one way later, its SYN-ACK comes back one way later.
        await asyncio.sleep(delay)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                target_host, target_port
            )
        except OSError:
            client_writer.close()
            return
        await asyncio.sleep(delay)
        try:
            await asyncio.gather(
                _pipe(client_reader, upstream_writer, delay),
                _pipe(upstream_reader, client_writer, delay),
            )
        finally:
            for writer in (client_writer, upstream_writer):
                with contextlib.suppress(OSError):
                    writer.close()

    server = await asyncio.start_server(handle, sock=ready)
    async with server:
        await server.serve_forever()


def main() -> None:
    """``fleet_proxy.py HOST:PORT ONE_WAY_MS``: serve on a free loopback port, print it."""
    parser = argparse.ArgumentParser(
        description="A TCP proxy that delays every byte by ONE_WAY_MS in each direction; "
        "prints the loopback address it serves on."
    )
    parser.add_argument("target", metavar="HOST:PORT", help="where to forward connections")
    parser.add_argument("one_way_ms", metavar="ONE_WAY_MS", type=float, help="one-way delay")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    if not host or not port.isdigit():
        parser.error(f"HOST:PORT expected, got {args.target!r}")
    one_way_ms = args.one_way_ms
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(f"127.0.0.1:{listener.getsockname()[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(host, int(port), one_way_ms / 1000, listener))


@contextlib.contextmanager
def latency_proxy(target: str, *, one_way_ms: float) -> Iterator[str]:
    """Run a proxy in front of ``target`` (``HOST:PORT``) in its own process; yield its
    ``HOST:PORT``. With ``one_way_ms`` 0, no proxy: ``target`` itself."""
    if one_way_ms <= 0:
        yield target
        return
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), target, str(one_way_ms)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        if not address:
            raise RuntimeError("the latency proxy did not start")
        yield address
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
