"""The versions of lmprof's files and wire protocol (docs/ARCHITECTURE.md, "One run
record"): read from formats.json, the one file the C++ build takes them from as well, so
the package and the engine cannot disagree on them."""

from __future__ import annotations

import json
from importlib import resources

_FORMATS = json.loads(resources.files("lmprof").joinpath("formats.json").read_text("utf-8"))

RESULT_SCHEMA: str = str(_FORMATS["result_schema"])  # a result set's "schema"
JOURNAL_SCHEMA: str = str(_FORMATS["journal_schema"])  # a step journal's header
PROTOCOL: int = int(_FORMATS["protocol"])  # docs/REMOTE.md, spoken by the live server
