import sys
from pathlib import Path

# The toy chapter declaration used by the command-line tests.
sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

# The toy notebook is executed by the command-line tests, not compared by nbval.
collect_ignore_glob = ["fixtures/*.ipynb"]
