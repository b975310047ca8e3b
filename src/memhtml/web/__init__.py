"""The browser app, ``memhtml serve``: the store's pages and the MCP tools on loopback."""
