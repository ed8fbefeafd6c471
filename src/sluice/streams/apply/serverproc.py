"""``python -m sluice.streams.apply.serverproc FD``: an apply server process (:mod:`.servers`);
a module of its own so that running it does not import :mod:`.servers` twice."""

import sys

from sluice.streams.apply.servers import server_main

if __name__ == "__main__":
    server_main(int(sys.argv[1]))
