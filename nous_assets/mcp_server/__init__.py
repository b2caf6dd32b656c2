"""Recall on demand: the tools Nous offers Claude over MCP (``nous mcp``).

The tool functions (``recall``, ``explain``, ``timeline``, ``predict``) take an open connection and the settings
and return plain data; :mod:`nous_assets.mcp_server.server` is the only module that knows the MCP SDK.
Every text they return comes from transcripts, so it is sanitised and redacted like a packet
(:mod:`nous_assets.mcp_server.render`), and a tool never opens a file: it reads ``cortex.db`` only.
:mod:`nous_assets.mcp_server.install` registers the server where Claude Code reads MCP servers.
"""
