import sys

from tools.sim.launcher import main

sys.exit(main())
