"""python -m tools.bench: make bench (report.main)."""
import sys

from .report import main

sys.exit(main())
