import sys

from sourcesum.cli import main

sys.exit(main())
