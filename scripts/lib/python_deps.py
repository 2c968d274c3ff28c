"""topolab's Python dependencies as scripts/setup installs them, once per machine (run by the system's Python 3.11,
before any environment exists: standard library only).

    python3 scripts/lib/python_deps.py key PYPROJECT           # the name of the environment that holds them
    python3 scripts/lib/python_deps.py requirements PYPROJECT  # one requirement a line, for pip install

The key names what is installed: pyproject.toml's dependencies and its ``dev`` extras, the Python version and the
machine, so that clones with the same dependencies share one environment and a changed list gets a new one.
"""

import hashlib
import json
import platform
import sys
import tomllib


def requirements(pyproject: str) -> list[str]:
    """The dependencies and the development extras of the project file, sorted."""
    with open(pyproject, "rb") as file:
        project = tomllib.load(file)["project"]
    return sorted(project["dependencies"]) + sorted(project["optional-dependencies"]["dev"])


def key(pyproject: str) -> str:
    """A name for the environment of these requirements on this Python and machine."""
    named = [requirements(pyproject), platform.python_version(), platform.machine()]
    return f"python-{platform.python_version()}-" + hashlib.sha256(json.dumps(named).encode()).hexdigest()[:12]


if __name__ == "__main__":
    what, path = sys.argv[1:3]
    print(key(path) if what == "key" else "\n".join(requirements(path)))
