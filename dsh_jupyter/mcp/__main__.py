"""``python -m dsh_jupyter.mcp``: the stdio MCP server (see ``dsh_jupyter.mcp.stdio``)."""

import sys

from .stdio import main

sys.exit(main())
