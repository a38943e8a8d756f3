"""The zero-code watcher's run, from arguments: the bootstrap's (_auto.py, from the
environment) and a framework callback's (lmprof.lightning, lmprof.huggingface) alike, so
that a callback and `lmprof-cli watch` give the same steps for the same script
(docs/WATCH.md, "Frameworks").
Under torchrun each rank's run is named `<name>-rank<N>`, saved to `<stem>.rank<N><suffix>`
and listens on the port + N, as the zero-code watcher's."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import torch

from ._run import Run, open_run


def _rank() -> str | None:
    """This process's rank with more than one: torchrun's RANK, else the process group's (a
    launcher that sets only LOCAL_RANK, as Lightning's own may), else None."""
    rank = os.environ.get("RANK")
    if rank is not None and os.environ.get("WORLD_SIZE", "1") != "1":
        return rank
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return str(dist.get_rank())
    return None


def framework_run(*, name: str | None, save: os.PathLike[str] | str | None,
                  listen: str | None, token_file: str | None,
                  tokens_per_step: int | None, memory_hz: float) -> Run:
    rank = _rank()
    if rank is not None and save is not None:
        path = Path(save)
        save = path.with_name(f"{path.stem}.rank{rank}{path.suffix}")
    if rank is not None and listen is not None:
        host, _, port = listen.rpartition(":")
        if port.isdigit() and int(port) > 0:
            listen = f"{host}:{int(port) + int(rank)}"
    script = next((a for a in sys.argv if a and not a.startswith("-")), "")
    return open_run(None, None, name=name, tokens_per_step=tokens_per_step, save=save,
                    script=script, suffix=f"-rank{rank}" if rank is not None else "",
                    listen=listen, token_file=token_file, serve_from_first_step=True,
                    memory_hz=memory_hz)


class Watching:
    """What both framework callbacks hold: watch()'s options but the model and optimizer,
    and the Run, started once when training starts and closed when it ends."""

    def __init__(self, *, name: str | None = None,
                 save: os.PathLike[str] | str | None = None, listen: str | None = None,
                 token_file: str | None = None, tokens_per_step: int | None = None,
                 memory_hz: float = 0.0) -> None:
        self._new_run = functools.partial(
            framework_run, name=name, save=save, listen=listen, token_file=token_file,
            tokens_per_step=tokens_per_step, memory_hz=memory_hz)
        self.run: Run | None = None

    def _start(self) -> None:
        if self.run is None:
            self.run = self._new_run()

    def _close(self) -> None:
        if self.run is not None:
            self.run.close()
