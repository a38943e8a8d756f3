"""The command line of the checks that watch a training script: the lmprof-cli to drive
(--cli), a work folder emptied for the run (--workdir) and the Python that trains
(--python, default this one)."""

import argparse
import shutil
import sys
from pathlib import Path


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    return args
