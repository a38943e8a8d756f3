"""Put on PYTHONPATH by `lmprof-cli watch`: watches the script when LMPROF_WATCH is set
(lmprof/_auto.py, loaded without importing the package and so torch), then runs any other
sitecustomize this one hides."""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("LMPROF_WATCH") == "1":
    try:
        _auto_file = os.path.join(os.path.dirname(_here), "_auto.py")
        _auto_spec = importlib.util.spec_from_file_location("_lmprof_auto", _auto_file)
        assert _auto_spec is not None and _auto_spec.loader is not None
        _auto = importlib.util.module_from_spec(_auto_spec)
        _auto_spec.loader.exec_module(_auto)
        _auto.arm()
    except Exception as exc:  # noqa: BLE001 - the script runs whatever happens here
        sys.stderr.write(f"lmprof: not watching this script: {exc}\n")

_others = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
