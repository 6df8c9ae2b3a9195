"""``python -m workspace_tools.cli``: the ``workspace-tools`` command."""

from workspace_tools.cli import main

raise SystemExit(main())
