"""`agentrag sample` and `agentrag version`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentrag import __version__


def sample(
    copy_to: Annotated[
        Path | None, typer.Option("--copy", help="Copy the sample documents into this folder instead.")
    ] = None,
) -> None:
    """Print the folder of the bundled sample corpus (Chinese and English documents of a fictional team).

    Example: agentrag ingest "$(agentrag sample)" && agentrag search "出差住宿标准是多少？"
    """
    import shutil
    from importlib.resources import files

    source = Path(str(files("agentrag") / "sample" / "docs"))
    if copy_to is None:
        print(source)
        return
    shutil.copytree(source, copy_to, dirs_exist_ok=True)
    print(copy_to)


def version() -> None:
    """Print the version."""
    print(__version__)
