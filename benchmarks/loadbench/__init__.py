"""Load generator and scenarios for the a2a_trio benchmarks.

Layout: ``http1`` and ``sse`` are sans-IO parsers (bytes in, events out); ``client`` puts them
on trio sockets; ``servers`` starts and watches the server processes; ``scenarios`` drive them;
``report`` prints the markdown. Everything talks to 127.0.0.1 only.
"""
