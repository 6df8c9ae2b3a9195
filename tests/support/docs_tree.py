"""The small documentation tree the docs tests run on."""

from __future__ import annotations

from pathlib import Path

PAGES: dict[str, str] = {
    "index.mdx": """---
title: Getting Started
description: Install the toolkit and run a first search.
---

import { Callout } from "nextra/components";
export const meta = { hidden: true };

# Welcome

Install the package with pip and open a notebook.

<Callout type="warning">Mind the pinned version.</Callout>

## Installation

Run `pip install workspace-tools` in a fresh environment.
""",
    "guides/deployment.md": """---
title: Deployment Guide
description: Ship the service to production.
---

# Deployment

Every deployment starts with a container image.

## Docker

Build the image with docker build and push it to the registry.

## Serverless

Serverless platforms run the bundle without a container.
""",
    "guides/caching.md": """# Caching Strategies

Memoization keeps results of expensive calls.

## Eviction

Least recently used entries leave first.
""",
    "guides/plain.md": "Just some text about widgets and gadgets.\n",
    "reference/api.mdx": """---
title: API Reference
description: Every function of the client.
---

# API

<PropertiesTable
  content={[
    {
      name: "threadId",
      type: "string",
      description: "The unique thread identifier",
      isOptional: false,
    },
  ]}
/>

## search()

Runs a query against the sky index.

```typescript
import { search } from "client";
const hits = await search("sky");
```
""",
    "reference/skyscraper.md": """---
title: Towers
description: Tall buildings.
---

# Towers

A skyscraper is a tall building.
""",
}


def make_docs_tree(root: Path) -> Path:
    """Write :data:`PAGES` under ``root`` and return it."""
    for rel, text in PAGES.items():
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    (root / "notes.txt").write_text("not a page about deployment\n", encoding="utf-8")
    return root
