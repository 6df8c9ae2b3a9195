"""A small repository of several languages, for the code-aware chunking tests."""

from __future__ import annotations

from pathlib import Path

PYTHON = '''"""A keyword index."""

import math


class SparseIndex:
    """Keyword index over chunks."""

    def __init__(self) -> None:
        self.docs: dict[str, list[str]] = {}

    def add(self, doc_id: str, words: list[str]) -> None:
        """Add a document's words."""
        self.docs[doc_id] = words

    def search(self, query: str) -> list[str]:
        """Rank the documents holding the query's words."""
        words = query.split()
        return sorted(self.docs, key=lambda d: -sum(w in self.docs[d] for w in words))


@staticmethod
def idf(count: int, total: int) -> float:
    """Inverse document frequency."""
    return math.log(total / count)
'''

TYPESCRIPT = """import { readFile } from "fs/promises";

/** Loads the settings. */
export async function loadSettings(path: string): Promise<Settings> {
  return JSON.parse(await readFile(path, "utf8"));
}

export interface Settings {
  retries: number;
}

export class RetryPolicy {
  constructor(private readonly settings: Settings) {}

  delay(attempt: number): number {
    return 2 ** attempt * 100;
  }
}

export const clamp = (value: number, low: number, high: number): number =>
  Math.min(high, Math.max(low, value));
"""

GO = """package server

import "net/http"

// Server answers HTTP requests.
type Server struct {
	addr string
}

// Start listens on the server's address.
func (s *Server) Start() error {
	return http.ListenAndServe(s.addr, nil)
}

func NewServer(addr string) *Server {
	return &Server{addr: addr}
}
"""

RUST = """use std::fmt;

/// A point on a plane.
#[derive(Debug)]
pub struct Point {
    x: i32,
    y: i32,
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub fn origin() -> Point {
    Point { x: 0, y: 0 }
}
"""

JAVA = """package shop;

/** A shopping cart. */
public class Cart {
    private int total;

    public Cart() {
        this.total = 0;
    }

    public void addItem(int price) {
        this.total += price;
    }
}
"""

FILES = {
    "src/index.py": PYTHON,
    "web/settings.ts": TYPESCRIPT,
    "server/server.go": GO,
    "geo/point.rs": RUST,
    "shop/Cart.java": JAVA,
    "README.md": "# Demo\n\nA repository in five languages.\n",
}


def make_code_repo(root: Path) -> Path:
    """Write :data:`FILES` under ``root`` and return it."""
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
