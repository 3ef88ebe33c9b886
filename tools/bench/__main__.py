import sys

from tools.bench.report import main

sys.exit(main())
