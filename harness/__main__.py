import sys

from harness._app._cli import main

sys.exit(main())
